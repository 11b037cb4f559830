"""Reading wrk's and ab's reports, and the commands a crosscheck runs them with (no
subprocess: the texts are those the tools printed on this machine)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from pytest_netbench import SpecError, ToolFailed, ToolFigures
from pytest_netbench._experiment.tool_output import parse_ab, parse_h2load, parse_wrk
from pytest_netbench._experiment.tool_runs import (
    ab_command,
    check_comparable,
    fitted,
    h2load_command,
    wrk_command,
)
from pytest_netbench._input.spec import http_spec

WRK = """\
Running 2s test @ http://127.0.0.1:38373/
  1 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   733.22us    1.51ms  15.68ms   89.39%
    Req/Sec    42.51k    12.97k   72.75k    66.67%
  Latency Distribution
     50%  151.00us
     75%  505.00us
     90%    2.37ms
     99%    1.02s
  88721 requests in 2.10s, 9.65MB read
  Socket errors: connect 1, read 2, write 3, timeout 4
  Non-2xx or 3xx responses: 12
Requests/sec:  42249.26
Transfer/sec:      4.59MB
"""

AB = """\
Server Software:
Server Hostname:        127.0.0.1
Server Port:            38373

Document Path:          /
Document Length:        12 bytes

Concurrency Level:      10
Time taken for tests:   0.082 seconds
Complete requests:      5000
Failed requests:        7
   (Connect: 0, Receive: 2, Length: 5, Exceptions: 0)
Non-2xx responses:      3
Keep-Alive requests:    5000
Total transferred:      690000 bytes
Requests per second:    61338.40 [#/sec] (mean)
Time per request:       0.163 [ms] (mean)
Time per request:       0.016 [ms] (mean, across all concurrent requests)

Connection Times (ms)
              min  mean[+/-sd] median   max
Total:          0    0   0.4      0       8

Percentage of the requests served within a certain time (ms)
  50%      0
  66%      0
  90%      1
  99%      2
 100%      8 (longest request)
"""

AB_CSV = "Percentage served,Time in ms\n0,0.016\n1,0.027\n50,0.105\n90,0.612\n99,1.776\n100,8.256"


def test_wrk_report() -> None:
    figures = parse_wrk(WRK, command=("wrk", "--latency"), version="wrk 4.1.0")
    assert figures.tool == "wrk" and figures.version == "wrk 4.1.0"
    assert figures.rps == 42249.26
    assert figures.requests == 88721 and figures.duration_s == pytest.approx(2.10)
    assert figures.p50_ms == pytest.approx(0.151)
    assert figures.percentile(75) == pytest.approx(0.505)
    assert figures.p90_ms == pytest.approx(2.37)
    assert figures.p99_ms == pytest.approx(1020.0)
    assert figures.errors == {"connect": 1, "read": 2, "write": 3, "timeout": 4, "status": 12}
    assert figures.errors_total == 22


def test_wrk_report_without_errors_or_distribution() -> None:
    quiet = "\n".join(
        line for line in WRK.splitlines() if "errors" not in line and "Non-" not in line
    )
    figures = parse_wrk(quiet.replace("Latency Distribution", "").replace("99%", "x"))
    assert figures.errors_total == 0
    assert math.isnan(figures.p99_ms) and figures.p50_ms == pytest.approx(0.151)


def test_ab_report_reads_the_csv_before_the_table() -> None:
    figures = parse_ab(AB, csv=AB_CSV, version="ab 2.3")
    assert figures.requests == 5000 and figures.rps == 61338.40
    assert figures.duration_s == pytest.approx(0.082)
    assert figures.errors == {"connect": 0, "receive": 2, "length": 5, "exceptions": 0, "status": 3}
    assert (figures.p50_ms, figures.p90_ms, figures.p99_ms) == (0.105, 0.612, 1.776)
    table_only = parse_ab(AB)  # whole milliseconds, as ab prints them
    assert (table_only.p50_ms, table_only.p90_ms, table_only.p99_ms) == (0.0, 1.0, 2.0)


@pytest.mark.parametrize("text", ["", "Segmentation fault", WRK.replace("Requests/sec", "R")])
def test_unreadable_output_is_a_tool_failure(text: str) -> None:
    with pytest.raises(ToolFailed, match="printed no"):
        parse_wrk(text)
    with pytest.raises(ToolFailed, match="printed no"):
        parse_ab(text)


def test_figures_survive_json() -> None:
    figures = parse_ab(AB, csv=AB_CSV, command=("ab", "-n", "5000"), version="ab 2.3")
    again = ToolFigures.from_dict(json.loads(json.dumps(figures.to_dict())))
    assert again == figures


def test_commands_carry_the_load() -> None:
    spec = http_spec(
        "http://127.0.0.1:8080/x?y=1", connections=20, duration=3, workers=2, timeout=2.5,
        headers=[("X-Test", "a b")],
    )  # fmt: skip
    assert wrk_command("/usr/bin/wrk", spec) == [
        "/usr/bin/wrk", "--latency", "-t", "2", "-c", "20", "-d", "3s", "--timeout", "3s",
        "-H", "X-Test: a b", "http://127.0.0.1:8080/x?y=1",
    ]  # fmt: skip
    ab = http_spec("http://127.0.0.1:8080/", connections=5, requests=100, keepalive=False)
    assert ab_command("/usr/bin/ab", ab, "p.csv") == [
        "/usr/bin/ab", "-q", "-r", "-n", "100", "-c", "5", "-s", "10", "-e", "p.csv",
        "http://127.0.0.1:8080/",
    ]  # fmt: skip
    assert "-k" in ab_command("ab", http_spec("http://127.0.0.1:1/", requests=10), "p.csv")


@pytest.mark.parametrize(
    ("tool", "options", "match"),
    [
        ("wrk", {"requests": 100}, "wrk runs for a duration"),
        ("wrk", {"duration": 1.5}, "wrk takes whole seconds"),
        ("wrk", {"duration": 2, "keepalive": False}, "use tool='ab' for keepalive=False"),
        ("wrk", {"duration": 2, "rate": 100}, "closed loop"),
        ("wrk", {"stages": [("2s", 10)]}, "drop stages for a crosscheck"),
        ("wrk", {"duration": 2, "method": "POST"}, "plain GET"),
        ("ab", {"duration": 2}, "pass requests="),
        ("ab", {"requests": 5, "connections": 10}, "at least as many requests"),
        ("ab", {"requests": 100, "workers": 2}, "ab runs in one thread"),
    ],
)
def test_loads_a_tool_cannot_run_alike_are_refused(
    tool: str, options: dict[str, object], match: str
) -> None:
    with pytest.raises(SpecError, match=match):
        check_comparable(tool, http_spec("http://127.0.0.1:8080/", **options))  # type: ignore[arg-type]


def test_a_scaled_load_is_fitted_to_the_tool() -> None:
    short = http_spec("http://127.0.0.1:8080/", duration=0.3)
    assert fitted("wrk", short).duration_s == 1.0
    few = http_spec("http://127.0.0.1:8080/", requests=3, connections=10)
    assert fitted("ab", few).requests == 10


# -- h2load (nghttp2-client 1.52.0, against the catalog's Go server over h2c) --
H2LOAD = (
    """\
finished in 2.00s, 25430.00 req/s, 844.63KB/s
requests: 50860 total, 50900 started, 50860 done, 50860 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 50860 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 1.65MB (1729804) total, 198.98KB (203760) headers (space savings 95.05%), """
    """596.02KB (610320) data
                     min         max         mean         sd        +/- sd
time for request:       53us     18.09ms      1.53ms       986us    87.09%
time for connect:       56us       105us        85us        21us    75.00%
time to 1st byte:     2.09ms      3.01ms      2.77ms       449us    75.00%
req/s           :    6289.05     6411.89     6353.50       53.93    50.00%
"""
)

H2LOAD_404 = """\
finished in 5.96ms, 16784.16 req/s, 730.70KB/s
requests: 100 total, 100 started, 100 done, 0 succeeded, 100 failed, 3 errored, 0 timeout
status codes: 0 2xx, 0 3xx, 90 4xx, 7 5xx
                     min         max         mean         sd        +/- sd
time for request:      132us      1.93ms       376us       424us    92.00%
"""


def test_h2load_figures_are_read_with_units() -> None:
    figures = parse_h2load(H2LOAD, command=("h2load",), version="h2load 1.52.0")
    assert (figures.tool, figures.requests, figures.rps, figures.duration_s) == (
        "h2load",
        50860,
        25430.0,
        2.0,
    )
    assert figures.errors == {"status": 0, "errored": 0}
    assert (figures.min_ms, figures.max_ms, figures.mean_ms, figures.stdev_ms) == pytest.approx(
        (0.053, 18.09, 1.53, 0.986)
    )
    assert math.isnan(figures.p99_ms)  # h2load prints no percentiles
    assert ToolFigures.from_dict(json.loads(json.dumps(figures.to_dict()))) == figures


def test_h2load_errors_are_statuses_and_errored_streams() -> None:
    figures = parse_h2load(H2LOAD_404)
    assert figures.duration_s == pytest.approx(0.00596)
    assert figures.errors == {"status": 97, "errored": 3} and figures.errors_total == 100


def test_h2load_output_without_its_figures_is_a_tool_failure() -> None:
    with pytest.raises(ToolFailed, match="h2load printed no 'finished in'"):
        parse_h2load("starting benchmark...\nconnect: Connection refused\n")


def test_the_h2load_command_is_the_loads() -> None:
    spec = http_spec("http://127.0.0.1:8080/", protocol="h2", streams=10, connections=4, duration=3)
    spec = dataclasses.replace(spec, headers=(("x-a", "1"),))
    assert h2load_command("h2load", spec) == [
        "h2load", "-c", "4", "-m", "10", "-t", "1", "-D", "3", "-H", "x-a: 1",
        "http://127.0.0.1:8080/",
    ]  # fmt: skip
    counted = http_spec("http://127.0.0.1:8080/", protocol="h2", connections=2, requests=500)
    assert h2load_command("h2load", counted)[-4:] == ["1", "-n", "500", "http://127.0.0.1:8080/"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"duration": 2}, "h2load is the HTTP/2 crosscheck: pass protocol='h2'"),
        ({"protocol": "h2", "duration": 1.5}, "h2load takes whole seconds"),
        ({"protocol": "h2", "requests": 3, "connections": 4}, "at least as many requests"),
        ({"protocol": "h2", "duration": 2, "workers": 3, "connections": 2}, "one connection per"),
        ({"protocol": "h2", "duration": 2, "rate": 100}, "closed loop"),
    ],
)
def test_h2load_refuses_what_it_cannot_run_the_same_way(
    options: dict[str, object], message: str
) -> None:
    spec = http_spec("http://127.0.0.1:8080/", **options)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=message):
        check_comparable("h2load", spec)
