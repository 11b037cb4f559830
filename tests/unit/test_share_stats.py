"""Per-host figures of a load on a cluster: each share's own counts and latency, merged
without loss into the load's, in the text report and the JSON (no sockets: the shares'
outcomes are built by hand, as the Dask transport brings them back)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

from pytest_netbench._model import ERROR_KINDS, LoadResult, LoadSpec
from pytest_netbench._report.summary import format_result
from pytest_netbench._stats.histogram import decode_histogram, new_histogram
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

SPEC = LoadSpec(kind="http", host="198.18.0.20", port=8080, connections=8, duration_s=2.0,
                workers=3, allow_remote=True)  # fmt: skip
START = 1_000_000_000


def _outcome(
    host: str,
    port: int,
    latencies_us: dict[int, int],
    *,
    errors: dict[str, int] | None = None,
    in_flight: int = 0,
    late_ns: int = 0,
) -> WorkerOutcome:
    counted = dict.fromkeys(ERROR_KINDS, 0) | (errors or {})
    return WorkerOutcome(
        sent=sum(latencies_us.values()) + sum(counted.values()) + in_flight,
        in_flight=in_flight,
        errors=counted,
        latency_counts=Counter(latencies_us),
        window_start_ns=START + late_ns,
        window_end_ns=START + 2_000_000_000,
        cpu_s=0.5,
        busy_s=1.2,
        host=host,
        worker=f"tcp://198.18.0.{port}:40000",
    )


def _result() -> LoadResult:
    slower = {150: 500, 9000: 40}
    lost = "Dask worker tcp://198.18.0.13:40000 on load-3: gone"
    outcomes = [
        _outcome("load-1", 11, {120: 900, 300: 100}, in_flight=4),
        _outcome("load-2", 12, slower, errors={"timeout": 3, "connect": 2}, late_ns=380_000),
        WorkerOutcome(lost=lost, worker="tcp://198.18.0.13:40000", host="load-3"),
    ]
    return merge_outcomes(SPEC, outcomes)


def test_each_share_holds_its_own_figures_and_they_add_up_to_the_load() -> None:
    r = _result()
    one, two, lost = r.generator.shares
    assert (one.host, one.sent, one.ok, one.errors_total, one.in_flight) == (
        "load-1",
        1004,
        1000,
        0,
        4,
    )
    assert (two.host, two.ok, two.errors["timeout"], two.errors["connect"]) == ("load-2", 540, 3, 2)
    assert two.latency.p99_ms > one.latency.p99_ms  # the slower host shows as slower
    assert (one.start_offset_ms, two.start_offset_ms) == (0.0, 0.38)
    assert r.generator.start_spread_ms == 0.38
    assert (lost.lost, lost.host, lost.sent, lost.latency.count) == (
        "Dask worker tcp://198.18.0.13:40000 on load-3: gone", "load-3", 0, 0,
    )  # fmt: skip
    running = (one, two)
    assert sum(s.ok for s in running) == r.ok and sum(s.sent for s in running) == r.sent
    merged = new_histogram()
    for share in running:
        assert share.sent == share.ok + share.errors_total + share.in_flight
        merged.add(decode_histogram(share.latency_histogram))
    assert list(merged.counts) == list(decode_histogram(r.latency_histogram).counts)


def test_the_json_keeps_every_share_figure_and_reads_back_equal() -> None:
    r = _result()
    text = json.dumps(r.to_dict(), allow_nan=False)  # a lost share's latency is null, not NaN
    shares = json.loads(text)["generator"]["shares"]
    assert [s["host"] for s in shares] == ["load-1", "load-2", "load-3"]
    assert shares[1]["errors"]["timeout"] == 3 and shares[1]["errors_total"] == 5
    assert shares[0]["latency"]["count"] == 1000 and shares[2]["latency"]["p99_ms"] is None
    back = LoadResult.from_dict(json.loads(text))
    assert back.generator.shares == r.generator.shares
    assert [s.latency_histogram for s in back.generator.shares] == [
        s.latency_histogram for s in r.generator.shares
    ]


def test_the_text_report_has_a_row_per_host_and_names_a_lost_one() -> None:
    report = format_result(_result(), width=80)
    lines = report.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    start = lines.index("Shares, one per Dask worker (latency of each share's ok responses, ms)")
    header, first, second, third = lines[start + 1 : start + 5]
    assert header.split() == [
        "share",
        "host",
        "sent",
        "ok",
        "errors",
        "p50",
        "p99",
        "max",
        "cpu",
        "busy",
    ]
    assert first.split()[:5] == ["0", "load-1", "1,004", "1,000", "0"]
    assert second.split()[:5] == ["1", "load-2", "545", "540", "5"]
    assert third.split()[:2] == ["2", "load-3"] and third.endswith("LOST")
    words = " ".join(report.split())
    assert "share 1 on load-2 (tcp://198.18.0.12:40000): window at +0.38 ms," in words
    assert "window at +0.38 ms, errors: connect 2, timeout 3" in words
    assert "share 2 on load-3 (tcp://198.18.0.13:40000): LOST: Dask worker" in report
    assert "the shares' windows opened within 0.38 ms" in report


def test_a_local_load_has_no_share_block() -> None:
    outcome = _outcome("", 11, {120: 10})
    outcome.worker = ""
    r = merge_outcomes(LoadSpec(kind="http", host="127.0.0.1", port=8080), [outcome])
    assert r.generator.shares == () and "Shares" not in format_result(r)


def _saturated_result() -> LoadResult:
    hot = _outcome("load-1", 11, {9000: 300})
    hot.busy_s = 1.96  # running or waiting for a CPU 98% of the 2 s window, on 0.5 s of CPU
    cool = _outcome("load-2", 12, {120: 900})
    cool.busy_s = 0.6
    return merge_outcomes(dataclasses.replace(SPEC, workers=2), [hot, cool])


def test_only_the_share_that_saturated_is_marked_and_the_reason_says_so() -> None:
    r = _saturated_result()
    hot, cool = r.generator.shares
    assert (hot.saturated, cool.saturated) == (True, False)
    assert r.invalid_causes == ("generator_saturated",)
    (reason,) = r.invalid_reasons
    assert reason.startswith(
        "generator saturated: running or waiting for a CPU most of the window: share 0 on"
        " load-1 (tcp://198.18.0.11:40000) 98% (cpu 25%); the other share was not (share 1 on"
        " load-2 busy 30%), so that host, not the server, set the pace of its share:"
    )
    back = LoadResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert [s.saturated for s in back.generator.shares] == [True, False]
    report = format_result(r, width=80)
    assert all(len(line) <= 80 for line in report.splitlines())
    rows = [line.split() for line in report.splitlines() if line.split()[1:2] == ["load-1"]]
    assert rows[0][-2:] == ["25%", "98%!"]  # the busy figure marked, cpu not
    words = " ".join(report.split())
    assert "share 0 on load-1 (tcp://198.18.0.11:40000): SATURATED: running or waiting for" in (
        words
    )
    assert "share 1 on load-2 (tcp://198.18.0.12:40000): window at" in words


def test_every_share_saturated_and_local_workers_keep_the_plain_reason() -> None:
    outcomes = [_outcome("load-1", 11, {120: 10}), _outcome("load-2", 12, {120: 10})]
    for o in outcomes:
        o.busy_s = 1.9
    (both,) = merge_outcomes(dataclasses.replace(SPEC, workers=2), outcomes).invalid_reasons
    assert "share 0 on load-1" in both and "share 1 on load-2" in both
    assert "not" not in both.split(":", 2)[2].split("so the figures")[0]  # no other share
    local = _outcome("", 11, {120: 10})
    local.worker, local.busy_s = "", 1.9
    (plain,) = merge_outcomes(SPEC, [local]).invalid_reasons
    assert plain.startswith("generator saturated: a worker was running or waiting for a CPU 95%")
