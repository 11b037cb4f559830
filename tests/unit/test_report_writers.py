"""Report writers: each output the settings ask for, in order, and room for one more."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from factories import make_result

from pytest_netbench._environment import collect_environment
from pytest_netbench._records import Record, load_session_json
from pytest_netbench._report.matrix import build_matrices
from pytest_netbench._report.writers import (
    WRITERS,
    OutputSettings,
    ReportWriter,
    SessionOutputs,
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
