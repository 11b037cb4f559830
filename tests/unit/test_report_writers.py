"""Report writers: each output the settings ask for, in order, and room for one more; a
`netbench` command's one result through the same writers."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from factories import make_result

from pytest_netbench._compare.gate import Comparison, compare_results, parse_thresholds
from pytest_netbench._compare.records import Record, load_session_json, without_nan
from pytest_netbench._host.environment import collect_environment
from pytest_netbench._model import LoadResult
from pytest_netbench._report.comparison import comparison_to_dict, render_comparison_markdown
from pytest_netbench._report.matrix import build_matrices
from pytest_netbench._report.writers import (
    WRITERS,
    OutputSettings,
    ReportWriter,
    SessionOutputs,
    command_outputs,
    write_outputs,
)


@dataclass(frozen=True)
class Destinations:
    json_path: str | None = None
    markdown_path: str | None = None
    benchmark_json_path: str | None = None
    plot_dir: str | None = None
    html_path: str | None = None


def _outputs(settings: Destinations, **kw: Any) -> SessionOutputs:
    records = [
        Record(nodeid=f"t.py::f[{n}]", function="t.py::f", params={"n": n}, result=make_result(ok))
        for n, ok in ((1, 100), (2, 200))
    ]
    return SessionOutputs(
        settings=settings,
        records=records,
        matrices=build_matrices(records),
        _environment=collect_environment(),
        **kw,
    )


def test_only_the_asked_for_outputs_are_written_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    settings = Destinations(
        json_path=str(tmp_path / "s.json"), benchmark_json_path=str(tmp_path / "b.json")
    )
    notes = write_outputs(WRITERS, _outputs(settings))
    assert notes == [
        f"netbench: results written to {tmp_path / 's.json'}",
        f"netbench: pytest-benchmark JSON written to {tmp_path / 'b.json'}",
    ]
    assert len(load_session_json(tmp_path / "s.json").records) == 2
    assert "benchmarks" in json.loads((tmp_path / "b.json").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "s.json"]


def test_markdown_goes_to_the_step_summary_without_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert write_outputs(WRITERS, _outputs(Destinations())) == []
    assert "t.py::f" in summary.read_text()


def test_session_json_is_amended_before_it_is_written(tmp_path: Path) -> None:
    def tag(payload: dict[str, Any]) -> None:
        payload["ci"] = {"build": "7"}

    settings = Destinations(json_path=str(tmp_path / "s.json"))
    write_outputs(WRITERS, _outputs(settings, amend_json=tag))
    assert json.loads((tmp_path / "s.json").read_text())["ci"] == {"build": "7"}


class CountingWriter:
    """A new kind of output joins by being one more writer in the list."""

    name = "count"

    def wanted(self, settings: OutputSettings) -> bool:
        return True

    def write(self, outputs: SessionOutputs) -> list[str]:
        return [f"{len(outputs.records)} records, {len(outputs.matrices)} matrix"]


def test_a_new_writer_plugs_in_without_changing_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    writers: tuple[ReportWriter, ...] = (*WRITERS, CountingWriter())
    assert write_outputs(writers, _outputs(Destinations()))[-1] == "2 records, 1 matrix"
    assert [w.name for w in WRITERS] == ["json", "markdown", "benchmark-json", "plot", "html"]


# -- a command's outputs (netbench ... --json/--plot/--html, compare --markdown) ----------------
def test_a_commands_json_is_its_results_own_document(tmp_path: Path) -> None:
    result = make_result(100)  # no latency figures: NaN in the model
    settings = Destinations(json_path=str(tmp_path / "out" / "r.json"))
    outputs = command_outputs(settings, result, name="netbench http http://127.0.0.1:1/")
    notes = write_outputs(WRITERS, outputs)
    assert notes == [f"netbench: results written to {tmp_path / 'out' / 'r.json'}"]
    text = (tmp_path / "out" / "r.json").read_text()
    assert "NaN" not in text  # strict JSON, as the session's: null
    assert json.loads(text) == without_nan(result.to_dict())
    assert LoadResult.from_dict(json.loads(text)).ok == 100
    assert outputs.records[0].function == "netbench http http://127.0.0.1:1/"


def test_a_command_writes_markdown_only_where_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = make_result(100)
    assert write_outputs(WRITERS, command_outputs(Destinations(), result, name="n")) == []
    settings = Destinations(markdown_path=str(tmp_path / "r.md"))
    notes = write_outputs(WRITERS, command_outputs(settings, result, name="n"))
    assert notes == [f"netbench: matrices written to {tmp_path / 'r.md'}"]
    assert (tmp_path / "r.md").read_text().startswith("## netbench results\n")
    assert not summary.exists()  # the plugin's session appends there; a command does not


def test_compare_writes_the_verdicts_and_their_table(tmp_path: Path) -> None:
    current = [make_result(500 + i) for i in range(8)]
    baseline = [make_result(1000 + i) for i in range(8)]
    limits = parse_thresholds("rps:5%")
    items = compare_results("t.py::f", current, baseline, limits)
    comparison = Comparison(items=tuple(items), baseline_name="base.json", thresholds=(*limits,))
    settings = Destinations(
        json_path=str(tmp_path / "v.json"), markdown_path=str(tmp_path / "v.md")
    )
    notes = write_outputs(WRITERS, command_outputs(settings, comparison, name="netbench compare"))
    assert notes == [
        f"netbench: results written to {tmp_path / 'v.json'}",
        f"netbench: Markdown written to {tmp_path / 'v.md'}",
    ]
    assert json.loads((tmp_path / "v.json").read_text()) == comparison_to_dict(comparison)
    markdown = (tmp_path / "v.md").read_text()
    assert render_comparison_markdown(comparison) in markdown
    assert "Gate **FAILED**" in markdown


def test_a_commands_page_is_titled_for_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no pictures: quicker
    settings = Destinations(html_path=str(tmp_path / "r.html"))
    outputs = command_outputs(settings, make_result(100), name="netbench http http://h:1/")
    assert write_outputs(WRITERS, outputs) == [
        f"netbench: HTML report written to {tmp_path / 'r.html'}"
    ]
    page = (tmp_path / "r.html").read_text()
    assert "<title>netbench results</title>" in page
    assert "<li><b>1</b>command</li>" in page
    assert "<code>netbench http http://h:1/</code>" in page
