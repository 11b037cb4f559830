"""A comparison as text and Markdown: changes, low-confidence marks, the gate's result."""

from __future__ import annotations

from factories import make_result

from pytest_netbench._compare.gate import compare_runs, parse_thresholds
from pytest_netbench._compare.records import Record
from pytest_netbench._report.comparison import render_comparison_markdown, render_comparison_text


def _records(test: str, figures: list[tuple[int, float]], errors: int = 0) -> list[Record]:
    timeouts = {"timeout": errors} if errors else None
    return [
        Record(
            nodeid=f"t.py::{test}",
            function="test",
            params={},
            result=make_result(ok, errors=timeouts, p50_ms=p99 / 2, p99_ms=p99),
            trial=i,
        )
        for i, (ok, p99) in enumerate(figures)
    ]


def test_comparison_text_and_markdown() -> None:
    baseline = _records("test_a", [(1000, 5.0)])
    current = _records("test_a", [(700, 5.0)], errors=2)
    comparison = compare_runs(
        current, baseline, parse_thresholds("rps:5%,errors_total:0"), baseline_name="0002_x"
    )
    text = render_comparison_text(comparison)
    assert "Comparison with baseline 0002_x" in text
    assert "REGRESSION?" in text  # single trial: low confidence
    assert "Gate FAILED: 2 regression(s)" in text
    assert "t.py::test_a: rps -30.0% (rps drop > 5%)" in text
    assert "errors_total +2 (errors_total rise > 0)" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    markdown = render_comparison_markdown(comparison)
    assert "| `t.py::test_a` | rps |" in markdown
    assert "Gate **FAILED**" in markdown


def test_passing_comparison_says_passed() -> None:
    figures = [(1000, 5.0), (1001, 5.01), (999, 4.99), (1000, 5.0)]
    comparison = compare_runs(
        _records("test_a", figures), _records("test_a", figures), parse_thresholds("rps:5%")
    )
    assert not comparison.failed
    assert "Gate passed: 0 regression(s), 0 unclear, 0 improved, 1 ok" in render_comparison_text(
        comparison
    )
