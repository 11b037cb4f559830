"""Request phases as figures: metric names, gate thresholds, SLO terms, the JSON form and
the text report (the engine's timing of them is tests/engine/test_phases.py's)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from factories import make_result

from pytest_netbench._compare.metrics import (
    check_metrics,
    higher_is_better,
    metric_value,
    split_request_metric,
)
from pytest_netbench._compare.records import Record
from pytest_netbench._compare.thresholds import parse_thresholds
from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.slo import parse_slo
from pytest_netbench._model import LatencySummary, LoadResult, Phases, RequestStats
from pytest_netbench._report.html.phases import phases_html
from pytest_netbench._report.phases import phase_lines, phase_tables_markdown
from pytest_netbench._report.summary import format_result
from pytest_netbench._stats.merge import merge_phases


def _phased(result: LoadResult) -> LoadResult:
    counts = {
        "wait": {30_000: 8, 31_000: 2},
        "receive": {20_000: 10},
        "connect": {150: 2},
    }
    phases = merge_phases([{name: Counter(c) for name, c in counts.items()}], waited=3)
    search = RequestStats(
        name="search",
        method="GET",
        path="/s",
        duration_s=1.0,
        sent=10,
        ok=10,
        errors={},
        in_flight=0,
        status_codes={200: 10},
        latency=LatencySummary(count=10, p50_ms=50.0),
        phases=phases,
    )
    return replace(result, phases=phases, by_request={"search": search})


def test_phases_merge_into_summaries_with_their_histograms() -> None:
    r = _phased(make_result(10, p50_ms=50.0))
    assert r.phases.wait.count == 10
    assert r.phases.wait.p50_ms == pytest.approx(30.0, rel=0.01)
    assert r.phases.percentile("wait", 100) == pytest.approx(31.0, rel=0.01)
    assert r.phases.receive.p99_ms == pytest.approx(20.0, rel=0.01)
    assert r.phases.tls.count == 0 and r.phases.waited_for_connection == 3
    with pytest.raises(ValueError, match=r"unknown phase 'ttfb'.*connect, tls, wait, receive"):
        r.phases.percentile("ttfb", 50)


def test_phases_are_metrics_lower_is_better_per_load_and_per_kind() -> None:
    r = _phased(make_result(10, p50_ms=50.0))
    assert metric_value(r, "phases.wait.p50_ms") == r.phases.wait.p50_ms
    assert metric_value(r, "by_request.search.phases.receive.p99_ms") == r.phases.receive.p99_ms
    assert not higher_is_better("phases.wait.p99_ms")
    assert not higher_is_better("by_request.search.phases.wait.p99_ms")
    assert split_request_metric("by_request.GET /a.json.phases.wait.p99_ms") == (
        "GET /a.json",
        "phases.wait.p99_ms",
    )
    assert check_metrics(["by_request.search.phases.wait.p99_ms"], requests=["search"])
    # A result without phases (an echo load, a run stored before them) reads nan.
    assert metric_value(make_result(10), "phases.wait.p99_ms") != metric_value(
        make_result(10), "phases.wait.p99_ms"
    )
    with pytest.raises(SpecError, match=r"unknown metric 'phases.wiat.p99_ms'"):
        check_metrics(["phases.wiat.p99_ms"])
    with pytest.raises(SpecError, match=r"'phases.wait' is not a number.*phases.wait.p99_ms"):
        check_metrics(["phases.wait"])


def test_gate_thresholds_and_slo_terms_take_phases() -> None:
    (limit,) = parse_thresholds("phases.wait.p99_ms:10%")
    assert limit.fails(33.5, 30.0) and not limit.fails(32.0, 30.0)
    (absolute,) = parse_thresholds("phases.receive.p50_ms:2ms")
    assert absolute.fails(23.0, 20.0)
    with pytest.raises(SpecError, match="a limit needs its unit"):
        parse_thresholds("phases.receive.p50_ms:2")
    slo = parse_slo("phases.wait.p99_ms < 40 and by_request.search.phases.receive.p50_ms < 25")
    verdict = slo.evaluate(_phased(make_result(10, p50_ms=50.0)))
    assert verdict.passed


def test_phases_round_trip_through_the_json_form() -> None:
    r = _phased(make_result(10, p50_ms=50.0))
    back = LoadResult.from_dict(r.to_dict())
    assert back.phases == r.phases
    assert back.phases.histograms == r.phases.histograms
    assert back.by_request["search"].phases == r.phases
    # A run stored before phases existed reads as none measured.
    old = r.to_dict()
    del old["phases"]
    assert LoadResult.from_dict(old).phases == Phases()


def test_the_text_report_shows_each_phase_measured_and_the_kinds() -> None:
    r = _phased(make_result(10, p50_ms=50.0))
    lines = phase_lines(r)
    assert lines[1] == "Phases (ms)"
    labels = [line.split()[0] for line in lines[3:7]]
    assert labels == ["connect", "wait", "receive", "wait"]  # tls: none measured
    assert "wait: request written to the answer's first byte" in "\n".join(lines)
    assert "3 requests waited for a connection" in "\n".join(lines)
    assert "Phases (ms)" in format_result(r)
    assert phase_lines(make_result(10)) == []


def test_each_load_of_a_test_gets_a_row_in_markdown_and_html() -> None:
    slow = _phased(make_result(10, p50_ms=50.0))
    records = [
        Record(nodeid=f"t.py::test[{n}]", function="test", params={"n": n}, result=result)
        for n, result in (("1", slow), ("2", make_result(10)))  # the second timed none
    ]
    markdown = phase_tables_markdown(records, "test")
    assert "| n=1 | 30.0" in markdown and "n=2" not in markdown
    html = "".join(phases_html(records, "test"))
    assert "<h4>Phases</h4>" in html and "n=1" in html and 'class="phase-bar"' in html
    assert 'title="wait p50 30.0' in html
    assert phases_html(records[1:], "test") == []
