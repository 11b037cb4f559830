"""Markdown reports and the GitHub step-summary append."""

from __future__ import annotations

from pathlib import Path

from factories import make_result

from pytest_netbench._compare.records import Record
from pytest_netbench._report.markdown import (
    append_github_step_summary,
    render_markdown,
    render_table_markdown,
    write_markdown,
)
from pytest_netbench._report.matrix import build_matrices


def _record(server: str, ok: int, trial: int = 0) -> Record:
    result = make_result(ok, p99_ms=2.0, valid=server != "bad")
    return Record(
        nodeid=f"t.py::test_m[{server}]",
        function="t.py::test_m",
        params={"server": server},
        result=result,
        trial=trial,
    )


def test_full_report_has_title_environment_tables_and_marks() -> None:
    records = [
        _record(s, ok, t) for s, ok in (("a", 100), ("b", 300), ("bad", 1)) for t in range(2)
    ]
    matrices = build_matrices(records, baseline="a")
    text = render_markdown(
        matrices, environment={"cpu": "X (2 cores)", "commit": ""}, comparison="### extra\n"
    )
    assert text.startswith("## pytest-netbench results\n")
    assert "<sub>cpu: X (2 cores)</sub>" in text  # empty facts left out
    assert "### `t.py::test_m`" in text
    assert "| server | rps | p99_ms |" in text
    assert "| b | **300** (±0%, 3.00x) |" in text
    assert "⚠ invalid" in text
    assert "median of 2 trials" in text and "ratio to `server=a`" in text
    assert text.rstrip().endswith("### extra")


def test_plain_table_helper_escapes_pipes() -> None:
    table = render_table_markdown(["a", "b"], [["x|y", 1]])
    assert table.splitlines() == ["| a | b |", "|---|---:|", "| x\\|y | 1 |"]


def test_step_summary_is_appended_only_when_configured(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    assert append_github_step_summary("## ours", environ={}) is None
    assert append_github_step_summary("## ours", environ={"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.read_text() == "earlier step\n## ours\n"


def test_write_markdown_creates_parents(tmp_path: Path) -> None:
    path = write_markdown(tmp_path / "a" / "b.md", "# x\n")
    assert path.read_text() == "# x\n"
