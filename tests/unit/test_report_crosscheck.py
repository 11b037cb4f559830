"""A crosscheck as text: the CLI's side-by-side report and the plugin's table (no tools run:
the second tool's figures are made up here)."""

from __future__ import annotations

from factories import make_result

from pytest_netbench import CrosscheckResult, ToolFigures
from pytest_netbench._compare.records import ExperimentRecord
from pytest_netbench._load.attempts import Attempts
from pytest_netbench._report.crosscheck import crosscheck_lines
from pytest_netbench._report.experiment_tables import (
    build_experiment_tables,
    render_experiment_text,
)

WRK = ToolFigures(
    tool="wrk",
    command=("/usr/bin/wrk", "--latency", "-c", "10", "http://127.0.0.1:1/"),
    requests=8000,
    duration_s=1.0,
    rps=8000.0,
    errors={"connect": 0, "read": 3, "status": 0},
    percentiles={50.0: 0.2, 90.0: 0.5, 99.0: 2.0},
    version="wrk 4.1.0",
)


def result(*, valid: bool = True) -> CrosscheckResult:
    netbench = make_result(
        10_000, p50_ms=0.1, p99_ms=3.0, valid=valid,
        invalid_reasons=() if valid else ("generator saturated",),
    )  # fmt: skip
    return CrosscheckResult("wrk", Attempts(netbench), WRK)


def test_the_report_sets_both_tools_side_by_side() -> None:
    lines = crosscheck_lines(result())
    table = lines[2:8]
    assert table[0].split() == ["netbench", "wrk", "netbench/wrk"]
    assert table[1].split() == ["req/s", "10,000", "8,000", "1.25"]
    assert table[2].split() == ["p50", "ms", "0.100", "0.200", "0.50"]
    assert table[3].split() == ["p90", "ms", "-", "0.500", "-"]  # netbench's p90 unknown here
    assert table[4].split() == ["p99", "ms", "3.000", "2.000", "1.50"]
    assert table[5].split() == ["errors", "0", "3"]  # no ratio for counts
    assert all(line == line.rstrip() for line in lines)
    text = "\n".join(lines)
    assert "wrk 4.1.0: 8,000 requests in 1.00 s" in text
    assert "  ran: /usr/bin/wrk --latency -c 10 http://127.0.0.1:1/" in lines
    assert "wrk's errors: read 3" in text
    assert "INVALID" not in text


def test_an_invalid_netbench_run_is_said_under_the_table() -> None:
    text = "\n".join(crosscheck_lines(result(valid=False)))
    assert "netbench's run is INVALID: generator saturated" in text


def record(tool_param: str | None) -> ExperimentRecord:
    params = {"server": "go"} if tool_param is None else {"server": "go", "tool": tool_param}
    data = result().to_dict()
    return ExperimentRecord("t.py::test_x[go]", "t.py::test_x", params, "crosscheck", data)


def test_the_plugin_table_has_each_figure_its_tool_and_the_ratio() -> None:
    (table,) = build_experiment_tables([record(None)])
    assert table.headers[:4] == ("tool", "rps", "tool_rps", "ratio")
    assert table.rows[0][:4] == ("wrk", "10,000", "8,000", "1.25")
    assert table.rows[0][-3:] == ("0", "3", "yes")
    assert table.headers[-1] == "valid"
    assert "(crosscheck with a second tool)" in render_experiment_text(table)


def test_an_invalid_netbench_run_is_marked_with_its_causes() -> None:
    spoiled = record(None)
    spoiled.data["valid"] = False
    spoiled.data["result"]["invalid_causes"] = ["generator_saturated"]
    (table,) = build_experiment_tables([spoiled])
    assert table.rows[0][-1] == "NO (generator_saturated)"


def test_a_tool_parameter_is_not_shown_twice() -> None:
    (table,) = build_experiment_tables([record("wrk"), record("ab")])
    assert table.param_names == ("tool",)
    assert table.headers[0] == "rps"
    assert table.rows[0][:3] == ("wrk", "10,000", "8,000")


def bracketed(after_rps: int) -> CrosscheckResult:
    """netbench at 10,000 req/s before wrk and at ``after_rps`` after it."""
    before = make_result(10_000, p50_ms=0.1, p99_ms=3.0)
    after = make_result(after_rps, p50_ms=0.3, p99_ms=5.0)
    return CrosscheckResult("wrk", Attempts(before), WRK, again=after, warmup_s=1.0)


def test_netbenchs_column_is_the_mean_of_its_runs_around_the_other_tool() -> None:
    steady = bracketed(11_000)
    assert steady.steady and round(steady.drift, 2) == 0.10
    lines = crosscheck_lines(steady)
    assert lines[3].split() == ["req/s", "10,500", "8,000", "1.31"]
    assert lines[4].split() == ["p50", "ms", "0.200", "0.200", "1.00"]
    text = "\n".join(lines)
    assert "(warmed first: 1 s of the same load, not measured)" in text
    assert "netbench ran before and after wrk: 10,000 then 11,000 req/s, +10%" in text
    assert "UNSTEADY" not in text
    (table,) = build_experiment_tables([_record_of(steady)])
    assert table.notes == ()


def test_a_server_that_changed_between_netbenchs_runs_is_marked_unsteady() -> None:
    warming = bracketed(16_000)
    assert not warming.steady
    text = " ".join(crosscheck_lines(warming))
    assert "UNSTEADY: netbench's runs before and after wrk's differ by 60% in req/s" in text
    assert "warm it longer (--warmup)" in text
    again = CrosscheckResult.from_dict(warming.to_dict())
    assert again.again is not None and not again.steady and again.warmup_s == 1.0
    (table,) = build_experiment_tables([_record_of(warming)])
    assert table.notes == (
        "unsteady: netbench's runs before and after wrk's differ by 60% in req/s; the server"
        " changed while it was measured",
    )


def _record_of(result: CrosscheckResult) -> ExperimentRecord:
    return ExperimentRecord("t.py::test_x", "t.py::test_x", {}, "crosscheck", result.to_dict())
