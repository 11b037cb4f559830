"""A comparison as text and Markdown: changes, low-confidence marks, the gate's result."""

from __future__ import annotations

from pathlib import Path

from factories import make_result

from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._compare.gate import compare_runs, parse_thresholds
from pytest_netbench._compare.records import Record, write_session_json
from pytest_netbench._plugin.conclusion import UNDETECTABLE_STATUS
from pytest_netbench._report.comparison import (
    comparison_to_dict,
    render_comparison_markdown,
    render_comparison_text,
)
from pytest_netbench.cli import main


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


# p50 spreading about 20 % a trial, the same on both sides: a 5 % limit cannot be seen.
NOISY = [(1000, 10.0), (1000, 12.5), (1000, 8.4), (1000, 11.0), (1000, 9.2)]


def test_an_undetectable_limit_reads_cannot_tell_not_passed(tmp_path: Path) -> None:
    comparison = compare_runs(
        _records("test_a", NOISY[::-1]), _records("test_a", NOISY), parse_thresholds("p50_ms:5%")
    )
    assert not comparison.failed and comparison.cannot_tell
    text = render_comparison_text(comparison)
    assert "Gate cannot tell: 0 regression(s), 0 unclear, 1 undetectable, 0 improved, 0 ok" in text
    assert "Gate passed" not in text
    (row,) = [line for line in text.splitlines() if line.strip().startswith("p50_ms")]
    assert row.rstrip().endswith("undetectable")
    assert "p50_ms: this runner's noise (" in " ".join(text.split())
    markdown = render_comparison_markdown(comparison)
    assert "Gate cannot tell" in markdown and "| undetectable |" in markdown
    data = comparison_to_dict(comparison)
    assert data["cannot_tell"] is True and data["counts"]["undetectable"] == 1
    (item,) = [i for i in data["items"] if i["metric"] == "p50_ms"]
    assert item["verdict"] == "undetectable" and item["detectable"] > 0.05
    assert item["budget"] == 5 and item["trial_spread"] > 0.05

    # `netbench compare` on the two files exits UNDETECTABLE (10), as pytest does.
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_session_json(base, _records("test_a", NOISY))
    write_session_json(head, _records("test_a", NOISY[::-1]))
    status = main(["compare", str(base), str(head), "--fail", "p50_ms:5%"])
    assert status == ExitCode.UNDETECTABLE == UNDETECTABLE_STATUS == 10
