"""The HTML report's page from records made in memory (no sockets): what each section
holds, escaping, verdict colours, the note when matplotlib is missing, and the CLI's entry.
The page in a real browser is tests/integration/test_html_report.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from factories import make_result

from pytest_netbench._compare.gate import Comparison, compare_results, parse_thresholds
from pytest_netbench._records import Record
from pytest_netbench._report.html import render_html_report, write_results_html

ENVIRONMENT = {
    "cpu_model": "Test CPU 9000",
    "cores_logical": 2,
    "python_implementation": "CPython",
    "python_version": "3.11.7",
    "system": "Linux",
    "release": "6.1.0",
    "packages": {"pytest_netbench": "0.1.0", "trio": None},
    "git": {"project": "p", "branch": "main", "commit": "abcdef1234567890", "dirty": True},
}
TOO_FAST = "generator saturated: a worker was running 97% of the time"


def _records() -> list[Record]:
    return [
        Record("t.py::test_get[a]", "t.py::test_get", {"server": "a"}, make_result(900)),
        Record(
            "t.py::test_get[<b>]",
            "t.py::test_get",
            {"server": "<b>"},
            make_result(1200, valid=False, invalid_reasons=(TOO_FAST,)),
        ),
    ]


def _page(**kw: object) -> str:
    return render_html_report(
        records=_records(), environment=ENVIRONMENT, plots=False, created=0.0, **kw
    )  # type: ignore[arg-type]


def test_the_matrix_marks_the_invalid_cell_with_its_reason() -> None:
    page = _page()
    matrix = re.search(r'<table class="matrix">.*?</table>', page, re.DOTALL)
    assert matrix is not None
    assert '<td class="label">&lt;b&gt;</td>' in matrix.group(0)  # escaped, never markup
    assert "<b>" not in matrix.group(0).replace("<b>NO</b>", "")
    invalid = re.findall(
        r'<td class="(?:gs )?num invalid" title="invalid: ([^"]+)">', matrix.group(0)
    )
    assert invalid == [TOO_FAST, TOO_FAST]  # rps and p99_ms of that row
    assert "<strong>1.20k</strong>" in matrix.group(0)  # the best rps, as the text table stars


def test_the_page_lists_invalid_results_loads_and_the_environment() -> None:
    page = _page()
    assert 'id="invalid"' in page and "Invalid results (1)" in page
    assert f'<td class="reason">{TOO_FAST}</td>' in page
    assert "Every load (2)" in page
    assert '<li class="bad"><b>1</b>invalid result</li>' in page
    assert "Test CPU 9000" in page
    assert "p main abcdef123456 (uncommitted changes)" in page
    assert "pytest_netbench 0.1.0" in page and "trio" not in page.split("packages", 1)[1]
    assert "1970-01-01 00:00:00 UTC" in page
    # Nothing outside the file: no scripts, no remote styles, fonts or images.
    assert "<script" not in page and "http://" not in page.replace("http://127.0.0.1:1/", "")


def test_many_invalid_results_are_counted_by_cause_and_listed_folded() -> None:
    # A busy machine: the generator saturated on 14 loads, a server died under one.
    records = [
        Record(
            f"t.py::test_get[s{i}]",
            "t.py::test_get",
            {"server": f"s{i}"},
            make_result(
                900,
                valid=False,
                invalid_reasons=(TOO_FAST if i else "the server died",),
                invalid_causes=("generator_saturated" if i else "server_died",),
            ),
        )
        for i in range(15)
    ]
    page = render_html_report(records=records, environment=ENVIRONMENT, plots=False, created=0.0)
    section = page.split('id="invalid"', 1)[1].split("</section>", 1)[0]
    assert "By cause: <b>14</b> generator saturated, <b>1</b> server died." in section
    assert "<details><summary>Each of the 15 results and its reasons</summary>" in section
    assert section.count("<tr class=invalid-row>") == 15
    # A short list stays open.
    assert "<details>" not in _page().split('id="invalid"', 1)[1].split("</section>", 1)[0]


def test_comparison_verdicts_are_coloured_and_the_gate_result_is_said() -> None:
    # Throughput halved, eight trials a side: a regression under any sane gate.
    current = [make_result(500 + i) for i in range(8)]
    baseline = [make_result(1000 + i) for i in range(8)]
    limits = parse_thresholds("rps:5%")
    items = compare_results("t.py::test_get[a]", current, baseline, limits)
    comparison = Comparison(items=tuple(items), baseline_name="main", thresholds=tuple(limits))
    page = _page(comparisons=[comparison])
    assert "Against main" in page
    assert re.search(r'<tr class="bad( first)?">.*?REGRESSION', page)
    assert '<p class="gate bad">Gate FAILED: 1 regression(s)' in page
    assert '<li class="bad"><b>gate</b>FAILED</li>' in page


def test_without_matplotlib_the_page_says_how_to_get_pictures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # how Python marks "cannot import"
    page = render_html_report(records=_records(), environment=ENVIRONMENT)
    assert "No pictures: plots need matplotlib" in page
    assert "pip install &#x27;pytest-netbench[plot]&#x27;" in page
    assert "<img" not in page


def test_the_command_line_entry_takes_bare_results(tmp_path: Path) -> None:
    results = [make_result(100), make_result(300)]
    path = write_results_html(
        tmp_path / "sub" / "r.html",
        results,
        name="netbench http http://127.0.0.1:1/",
        labels=["cold", "warm"],
        environment=ENVIRONMENT,
        plots=False,
    )
    page = path.read_text(encoding="utf-8")
    assert "<title>netbench results</title>" in page
    assert "<code>netbench http http://127.0.0.1:1/</code>" in page
    assert "<li><b>1</b>command</li><li><b>2</b>loads</li>" in page
    matrix = re.search(r'<table class="matrix">.*?</table>', page, re.DOTALL)
    assert matrix is not None and "cold" in matrix.group(0) and "warm" in matrix.group(0)
    with pytest.raises(ValueError, match="1 label"):
        write_results_html(tmp_path / "x.html", results, labels=["one"], plots=False)
