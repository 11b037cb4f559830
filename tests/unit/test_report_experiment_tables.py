"""Experiment tables (a sweep's steps, a capacity per parametrisation) and the note on
discarded runs, as text, Markdown and in the files a session writes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from factories import make_result

from pytest_netbench._compare.records import (
    ExperimentRecord,
    Record,
    load_session_json,
    without_nan,
)
from pytest_netbench._experiment.capacity import CapacityResult, CapacityStep
from pytest_netbench._experiment.sweep import SweepResult, SweepStep
from pytest_netbench._host.environment import collect_environment
from pytest_netbench._load.attempts import Attempts
from pytest_netbench._model import LoadResult
from pytest_netbench._report.discards import discard_notes, render_discards_text
from pytest_netbench._report.experiment_tables import (
    build_experiment_tables,
    render_experiment_markdown,
    render_experiment_text,
)
from pytest_netbench._report.writers import WRITERS, SessionOutputs, write_outputs

LAG = "generator fell behind its schedule: send lag p99 41.9 ms: add workers or lower the rate"


def _lagging() -> LoadResult:
    return dataclasses.replace(
        make_result(50), valid=False, invalid_reasons=(LAG,), invalid_causes=("schedule_lag",)
    )


def _as_stored(data: dict[str, Any]) -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(json.dumps(without_nan(data)))
    return stored


def _sweep_record(server: str) -> ExperimentRecord:
    full = dataclasses.replace(
        make_result(150, p50_ms=30.0, p99_ms=90.0),
        valid=False,
        invalid_reasons=("rate not achieved: ...",),
        invalid_causes=("rate_not_achieved",),
    )
    steps = (
        SweepStep(100.0, Attempts(make_result(100, p50_ms=1.0, p99_ms=2.5), (_lagging(),))),
        SweepStep(200.0, Attempts(full)),
    )
    result = SweepResult((100.0, 200.0, 400.0), steps, True, "stopped after 200 req/s: ...")
    return ExperimentRecord(
        nodeid=f"t.py::test_sweep[{server}]",
        function="t.py::test_sweep",
        params={"server": server},
        kind="sweep",
        data=_as_stored(result.to_dict()),
    )


def _capacity_record(server: str, rate: float | None) -> ExperimentRecord:
    steps = tuple(
        CapacityStep(r, "bracket", "pass", "", Attempts(make_result(10, p99_ms=3.0)))
        for r in (100.0, 200.0)
    )
    reason = "unknown: the generator could not produce 400 req/s" if rate is None else "met"
    result = CapacityResult(rate, reason, "p99_ms < 50", 0.05, steps, at_least=200.0)
    return ExperimentRecord(
        nodeid=f"t.py::test_cap[{server}]",
        function="t.py::test_cap",
        params={"server": server},
        kind="capacity",
        data=_as_stored(result.to_dict()),
    )


def test_a_sweep_table_has_a_row_per_step_with_the_rate_as_a_column() -> None:
    (table,) = build_experiment_tables([_sweep_record("a"), _sweep_record("b")])
    assert table.kind == "sweep" and table.param_names == ("server",)
    assert table.headers == (
        "rate",
        "sent",
        "answered",
        "p50_ms",
        "p99_ms",
        "errors",
        "runs",
        "valid",
    )
    assert table.rows[0] == ("a", "100", "100", "100", "1", "2.50", "0", "2", "yes")
    assert table.rows[1] == (
        "a", "200", "150", "150", "30", "90", "0", "1", "NO (rate_not_achieved)"
    )  # fmt: skip
    assert [r[0] for r in table.rows] == ["a", "a", "b", "b"]
    text = render_experiment_text(table)
    lines = text.splitlines()
    assert lines[0] == "t.py::test_sweep  (rate sweep)"
    assert lines[2].split() == ["server", *table.headers]
    assert lines[3].split()[0] == "a" and lines[4].split()[0] == "200"  # label not repeated
    assert "a: stopped after 200 req/s: ..." in text
    markdown = render_experiment_markdown(table)
    assert markdown.startswith("### `t.py::test_sweep` (rate sweep)")
    assert "| a | 200 | 150 | 150 | 30 | 90 | 0 | 1 | NO (rate_not_achieved) |" in markdown


def test_a_capacity_table_has_the_answer_per_parametrisation() -> None:
    records = [_capacity_record("a", 480.0), _capacity_record("b", None)]
    (table,) = build_experiment_tables(records)
    assert table.headers == ("capacity", "slo", "confirmed", "steps", "loads")
    assert table.rows == (
        ("a", "480 req/s", "p99_ms < 50", "no", "2", "2"),
        ("b", "unknown (>= 200)", "p99_ms < 50", "no", "2", "2"),
    )
    assert table.notes[1] == "b: unknown: the generator could not produce 400 req/s"


def test_discarded_runs_are_counted_per_test_and_cause() -> None:
    load = Record(
        "t.py::test_load", "t.py::test_load", {}, make_result(10), discarded=(_lagging(),)
    )
    clean = Record("t.py::test_clean", "t.py::test_clean", {}, make_result(10))
    notes = discard_notes([load, clean], [_sweep_record("a")])
    assert [(n.key, n.discarded, n.runs, dict(n.causes)) for n in notes] == [
        ("t.py::test_load", 1, 2, {"schedule_lag": 1}),
        ("t.py::test_sweep[a]", 1, 3, {"schedule_lag": 1}),
    ]
    text = render_discards_text(notes, width=200)
    assert text.splitlines()[0] == (
        "netbench: 2 run(s) discarded and run again, invalid for generator-side causes"
        " (schedule_lag 2) in 2 test(s):"
    )
    assert text.splitlines()[1:3] == [
        "  t.py::test_load",
        f"    1 of 2 runs discarded (schedule_lag 1); e.g. {LAG}",
    ]
    assert render_discards_text(discard_notes([clean])) == ""


def test_json_and_markdown_outputs_carry_experiments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    @dataclasses.dataclass(frozen=True)
    class Destinations:
        json_path: str | None = str(tmp_path / "s.json")
        markdown_path: str | None = str(tmp_path / "s.md")
        benchmark_json_path: str | None = None
        plot_dir: str | None = None
        html_path: str | None = None

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    load = Record(
        "t.py::test_load", "t.py::test_load", {}, make_result(10), discarded=(_lagging(),)
    )
    outputs = SessionOutputs(
        settings=Destinations(),
        records=[load],
        matrices=[],
        experiments=[_sweep_record("a"), _capacity_record("a", 480.0)],
        _environment=collect_environment(),
    )
    write_outputs(WRITERS, outputs)
    session = load_session_json(tmp_path / "s.json")
    assert [e.kind for e in session.experiments] == ["sweep", "capacity"]
    assert session.records[0].attempts == 2
    markdown = (tmp_path / "s.md").read_text()
    assert "### `t.py::test_sweep` (rate sweep)" in markdown
    assert "### `t.py::test_cap` (capacity search)" in markdown
    assert "### Discarded runs" in markdown


def _cold_start_record(data_changes: dict[str, Any]) -> ExperimentRecord:
    data = {
        "kind": "cold_start",
        "valid": True,
        "first_second_rate": 612.4,
        "steady_rate": 998.0,
        "first_second_ratio": 0.6136,
        "settle_s": 0.5,
        "settled": True,
        "first_second_p50_ms": 12.5,
        "steady_p50_ms": 8.0,
        "p50_settle_s": 0.75,
        "discarded": [],
        **data_changes,
    }
    return ExperimentRecord("t.py::test_cold", "t.py::test_cold", {}, "cold_start", data)


def test_a_cold_start_table_reads_the_curve() -> None:
    never = _cold_start_record({"settle_s": None, "settled": False, "p50_settle_s": None})
    saturated = _cold_start_record(
        {"valid": False, "result": {"invalid_causes": ["generator_saturated"]}}
    )
    (table,) = build_experiment_tables([_cold_start_record({}), never, saturated])
    assert table.headers == (
        "first_s_rps",
        "steady_rps",
        "ratio",
        "settle_s",
        "first_s_p50",
        "steady_p50",
        "p50_settle_s",
        "valid",
    )
    assert table.rows == (
        ("612", "998", "0.614", "0.500", "12.5", "8", "0.750", "yes"),
        ("612", "998", "0.614", "never", "12.5", "8", "never", "yes"),
        # why it is invalid, as a sweep step and a crosscheck say it (it read "no")
        ("612", "998", "0.614", "0.500", "12.5", "8", "0.750", "NO (generator_saturated)"),
    )
    assert render_experiment_text(table).startswith("t.py::test_cold  (cold start)\n")
