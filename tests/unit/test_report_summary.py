"""The text report of one load: sections present, numbers readable, invalid results loud."""

from __future__ import annotations

import dataclasses
import math

from hdrh.histogram import HdrHistogram

from pytest_netbench._model import (
    ERROR_KINDS,
    GeneratorStats,
    LatencySummary,
    LoadResult,
    LoadSpec,
    ServerStats,
    TimelineRow,
)
from pytest_netbench._report.cells import format_bytes, format_ms
from pytest_netbench._report.summary import format_result


def _summary_of(samples_us: list[int]) -> tuple[LatencySummary, str]:
    hist = HdrHistogram(1, 3_600_000_000, 3)
    for value in samples_us:
        hist.record_value(value)
    pct = hist.get_percentile_to_value_dict([50, 75, 90, 95, 99, 99.9])
    summary = LatencySummary(
        count=hist.get_total_count(),
        p50_ms=pct[50] / 1000,
        p75_ms=pct[75] / 1000,
        p90_ms=pct[90] / 1000,
        p95_ms=pct[95] / 1000,
        p99_ms=pct[99] / 1000,
        p999_ms=pct[99.9] / 1000,
        min_ms=hist.get_min_value() / 1000,
        max_ms=hist.get_max_value() / 1000,
        mean_ms=hist.get_mean_value() / 1000,
        stdev_ms=hist.get_stddev() / 1000,
    )
    return summary, hist.encode().decode("ascii")


def _result(**overrides: object) -> LoadResult:
    latency, encoded = _summary_of([1000 + 10 * i for i in range(1000)])
    fields: dict[str, object] = dict(
        mode="closed",
        url="http://127.0.0.1:8080/",
        duration_s=2.0,
        sent=1010,
        ok=1000,
        errors={},
        in_flight=10,
        status_codes={200: 1000},
        bytes_read=120_000,
        bytes_written=40_000,
        latency=latency,
        timeline=(TimelineRow(0, 480, 0, 9.0), TimelineRow(1, 520, 0, 9.5)),
        latency_histogram=encoded,
        spec=LoadSpec(kind="http", host="127.0.0.1", port=8080, connections=50),
    )
    fields.update(overrides)
    return LoadResult(**fields)  # type: ignore[arg-type]


def test_closed_loop_report_has_every_section_and_fits_80_columns() -> None:
    text = format_result(_result())
    for needle in (
        "Target: GET http://127.0.0.1:8080/",
        "closed loop",
        "50 connections",
        "keep-alive",
        "Requests/sec:",
        "500.0",  # 1000 ok / 2 s
        "stdev 28.3",  # stdev of 480, 520
        "Transfer/sec:",
        "1,010 sent, 1,000 ok, 0 errors, 10 in flight",
        "Errors: none",
        "Status codes: 200: 1,000",
        "Generator",
    ):
        assert needle in text, needle
    assert "INVALID" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if "p99.9" in line)
    for column in ("p50", "p75", "p90", "p95", "p99", "max", "mean", "stdev"):
        assert column in header


def test_latency_row_values_come_from_the_summary() -> None:
    result = _result()
    row = next(line for line in format_result(result).splitlines() if line.startswith("  all"))
    cells = row.split()[1:]
    assert len(cells) == 9
    assert cells[0] == format_ms(result.p50_ms)
    assert cells[4] == format_ms(result.p99_ms)
    assert cells[6] == format_ms(result.max_ms)


def test_open_loop_shows_corrected_and_uncorrected_rows_and_send_lag() -> None:
    corrected, _ = _summary_of([5000 + i for i in range(100)])
    uncorrected, _ = _summary_of([1000 + i for i in range(100)])
    result = _result(
        mode="open",
        latency=corrected,
        uncorrected=uncorrected,
        spec=LoadSpec(kind="http", host="127.0.0.1", port=8080, rate=2000.0),
        generator=GeneratorStats(
            intended_rate=2000.0, achieved_rate=1990.5, send_lag_p99_ms=0.25, late_sends=3
        ),
    )
    lines = format_result(result).splitlines()
    corrected_row = next(line for line in lines if line.startswith("  corrected"))
    uncorrected_row = next(line for line in lines if line.startswith("  uncorrected"))
    assert corrected_row.split()[1] == format_ms(corrected.p50_ms)
    assert uncorrected_row.split()[1] == format_ms(uncorrected.p50_ms)
    text = "\n".join(lines)
    assert "rate 2,000/s (uniform)" in text
    assert "intended 2,000.0/s, achieved 1,990.5/s" in text
    assert "send lag p99 0.250 ms" in text
    assert "late sends 3" in text


def test_lower_bounds_in_the_corrected_figures_are_said_so() -> None:
    corrected, _ = _summary_of([5000 + i for i in range(100)])
    uncorrected, _ = _summary_of([1000 + i for i in range(90)])
    result = _result(
        mode="open",
        sent=100,
        ok=90,
        in_flight=10,
        status_codes={200: 90},
        latency=corrected,
        uncorrected=uncorrected,
        spec=LoadSpec(kind="http", host="127.0.0.1", port=8080, rate=100.0, drain=False),
        generator=GeneratorStats(intended_rate=100.0, achieved_rate=100.0, lower_bounds=10),
    )
    text = " ".join(format_result(result).split())
    assert "Latency (ms) of 90 ok responses and 10 lower bounds" in text
    assert "(the corrected samples include 10 lower bounds: requests still unanswered" in text
    assert "the true percentiles can only be higher)" in text
    drained = dataclasses.replace(
        result,
        in_flight=0,
        ok=100,
        generator=GeneratorStats(intended_rate=100.0, achieved_rate=96.0, sent_after_window=4),
    )
    one = dataclasses.replace(result, generator=GeneratorStats(lower_bounds=1))
    assert "ok responses and 1 lower bound " in " ".join(format_result(one).split())
    text = " ".join(format_result(drained).split())
    assert "Latency (ms) of 100 ok responses" in text
    assert "lower bound" not in text
    assert "sent after the window 4" in text


def test_any_error_shows_all_six_kinds_and_short_samples() -> None:
    result = _result(
        ok=990,
        errors={"reset": 7, "status": 3},
        in_flight=10,
        status_codes={200: 990, 503: 3},
        error_samples={"reset": "ConnectionResetError: " + "x" * 500},
    )
    text = format_result(result)
    assert "Errors: 10 total" in text
    for kind in ERROR_KINDS:
        assert f"{kind} " in text
    assert "reset 7" in text and "status 3" in text and "verify 0" in text
    assert "e.g. reset: ConnectionResetError:" in text
    assert "x" * 200 not in text.replace("\n", "").replace(" ", "")
    assert "503: 3" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_invalid_result_says_so_loudly_with_its_reasons() -> None:
    result = _result(valid=False, invalid_reasons=("generator saturated (cpu 99%)", "fds"))
    lines = format_result(result).splitlines()
    invalid = [line for line in lines if line.startswith("INVALID: ")]
    assert len(invalid) == 2  # at the top and as the last line
    assert lines[-1].startswith("INVALID: ") or lines[-2].startswith("INVALID: ")
    assert "generator saturated (cpu 99%); fds" in invalid[0]


def test_server_figures_are_shown_when_present() -> None:
    server = ServerStats(
        pid=4321,
        cpu_user_s=1.5,
        cpu_system_s=0.5,
        cpu_ms_per_request=2.0,
        rss_peak_mb=33.3,
        threads_peak=4,
        fds_peak=70,
        sockets_time_wait_peak=12,
        samples=20,
        cpu_wait_s=0.5,
    )
    text = " ".join(format_result(_result(server=server)).split())
    assert "Server (pid 4321)" in text
    assert "cpu 2.00 s (user 1.50 + sys 0.50), waited for a CPU 0.50 s (20% of the time" in text
    assert "2.000 ms cpu per request" in text
    assert "peak RSS 33.3 MB" in text
    assert "TIME_WAIT 12" in text


def test_no_ok_responses_and_zero_duration_do_not_crash() -> None:
    result = _result(
        ok=0,
        sent=5,
        in_flight=0,
        errors={"connect": 5},
        latency=LatencySummary(),
        duration_s=0.0,
        timeline=(),
        status_codes={},
        latency_histogram="",
    )
    text = format_result(result)
    assert "no ok responses" in text
    assert "connect 5" in text


def test_echo_results_count_exchanges_and_survive_a_json_round_trip() -> None:
    spec = LoadSpec(kind="echo", host="::1", port=9000, payload=b"x" * 512, chunk=128)
    result = _result(url=spec.url, spec=spec, status_codes={})
    text = format_result(result)
    assert "Target: tcp://[::1]:9000" in text
    assert "Exchanges/sec:" in text
    assert "512 B payload" in text
    again = format_result(LoadResult.from_dict(result.to_dict()))
    assert "Exchanges/sec:" in again


def test_number_formats_stay_short() -> None:
    assert format_ms(math.nan) == "-"
    assert format_ms(0.1234) == "0.123"
    assert format_ms(12.345) == "12.35"  # rounds, never truncates to more than 7 chars
    assert format_ms(123456.0) == "123s"
    assert all(len(format_ms(v)) <= 7 for v in (0.001, 9.999, 99.99, 999.9, 99999.0, 3.6e6))
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.50 KiB"
    assert format_bytes(5 * 1024**4) == "5120.00 GiB"


def test_narrow_width_still_wraps_free_text() -> None:
    result = _result(valid=False, invalid_reasons=("a long reason " * 8,))
    text = format_result(result, width=50)
    invalid_block = [line for line in text.splitlines() if "long reason" in line]
    assert all(len(line) <= 50 for line in invalid_block)


def test_a_load_where_nothing_succeeded_ends_saying_so_with_kinds_and_a_sample() -> None:
    result = _result(
        ok=0,
        sent=50,
        in_flight=0,
        errors={"status": 50},
        status_codes={404: 50},
        error_samples={"status": "HTTP 404"},
        latency=LatencySummary(),
        latency_histogram="",
    )
    lines = format_result(result).splitlines()
    assert lines[-1] == "NO REQUEST SUCCEEDED: 50 of 50 requests were status errors, e.g. HTTP 404"
    assert "nan" not in "\n".join(lines)
    assert "NO REQUEST SUCCEEDED" not in format_result(_result())


def test_thresholds_show_every_term_with_its_value_and_a_closing_count() -> None:
    from pytest_netbench._experiment.slo import parse_slo

    result = _result(ok=990, errors={"reset": 10}, in_flight=10)
    verdict = parse_slo("p99_ms < 50, error_rate < 0.001", what="threshold").evaluate(result)
    lines = format_result(result, thresholds=verdict).splitlines()
    block = lines[lines.index("Thresholds") :]
    assert block[1].split() == ["ok", "p99_ms", "<", "50", "p99_ms", "=", format_g(result.p99_ms)]
    assert block[2].split()[:4] == ["FAILED", "error_rate", "<", "0.001"]
    assert block[2].endswith(f"error_rate = {10 / 1010:g}")  # 10 resets of 1,010 sent
    assert lines[-1] == "THRESHOLDS FAILED: 1 of 2 (error_rate < 0.001)"
    passed = parse_slo("p99_ms < 50").evaluate(result)
    assert format_result(result, thresholds=passed).splitlines()[-1] == "Thresholds passed: 1 of 1"


def test_a_latency_threshold_of_a_load_with_no_ok_response_reads_no_ok_response() -> None:
    from pytest_netbench._experiment.slo import parse_slo

    result = _result(
        ok=0, sent=3, in_flight=0, errors={"reset": 3}, latency=LatencySummary(), status_codes={}
    )
    verdict = parse_slo("p99_ms < 50").evaluate(result)
    lines = format_result(result, thresholds=verdict).splitlines()
    assert "  FAILED  p99_ms < 50  p99_ms = n/a (no ok response)" in lines
    assert lines[-1].startswith("NO REQUEST SUCCEEDED: 3 of 3 requests were reset errors")


def format_g(value: float) -> str:
    return f"{value:g}"


def test_an_invalid_reason_of_several_lines_keeps_them() -> None:
    # Issue 20, item 8: a dead server's command and log tail were run into one paragraph.
    reason = (
        "server died during the load: server 'app' exited with code 3 after it became ready\n"
        "  command: python app.py --port 0\n"
        "--- last lines of the log ---\n"
        "app: crashing on purpose"
    )
    result = _result(valid=False, invalid_reasons=(reason, "fds"))
    lines = format_result(result).splitlines()
    top = lines.index(next(line for line in lines if line.startswith("INVALID: ")))
    assert lines[top : top + 6] == [
        "INVALID: server died during the load: server 'app' exited with code 3 after it",
        "    became ready; fds -- these figures cannot be trusted",
        "      command: python app.py --port 0",
        "    --- last lines of the log ---",
        "    app: crashing on purpose",
        "",
    ]
    # The repeat at the end is the paragraph alone, so the report still ends with it.
    assert lines[-1] == "    became ready; fds -- these figures cannot be trusted (details above)"


def test_a_mix_names_its_kinds_and_feeders_not_one_request() -> None:
    from pytest_netbench._model import Request
    from pytest_netbench._model.feeders import count

    mix = (Request("GET", "/items", name="list"), Request("POST", "/orders", weight=3))
    spec = LoadSpec(kind="http", host="127.0.0.1", port=8080, mix=mix, mix_order="weighted")
    text = format_result(_result(spec=spec))
    head = " ".join(text.split("\n  closed loop")[0].split())
    assert (
        head == "Target: http://127.0.0.1:8080, a mix of 2 requests by weight (list, POST /orders)"
    )
    assert "GET http://127.0.0.1:8080/" not in text
    fed = dataclasses.replace(spec, mix=mix[:1], mix_order="cycle", feeders=(("id", count()),))
    first = format_result(_result(spec=fed), width=60).splitlines()[:2]
    assert first == [
        "Target: http://127.0.0.1:8080, a mix of 1 request in turn",
        "  (list), filled from feeders id (seed 0)",
    ]


def test_a_server_that_closed_every_connection_is_not_headed_keep_alive() -> None:
    # gunicorn's sync worker closes each connection: 4,897 opened for 4 in use.
    spec = LoadSpec(kind="http", host="127.0.0.1", port=8080, connections=4)
    closed = _result(spec=spec, generator=GeneratorStats(connections_opened=4_897))
    words = " ".join(format_result(closed).split())  # the heading wraps at 80 columns
    assert "keep-alive asked, but the server closed connections (4,897 opened)" in words
    kept = _result(spec=spec, generator=GeneratorStats(connections_opened=4))
    header = format_result(kept).splitlines()[1]
    assert header.endswith("keep-alive") and "server closed" not in header
