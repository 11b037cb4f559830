"""The HTML report's page from records made in memory (no sockets): what each section
holds, escaping, verdict colours, the note when matplotlib is missing, and the CLI's entry.
The page in a real browser is tests/integration/test_html_report.py."""

from __future__ import annotations

import dataclasses
import re
import sys
from collections import Counter
from html import unescape
from pathlib import Path

import pytest
from factories import make_result

from pytest_netbench._compare.gate import Comparison, compare_results, parse_thresholds
from pytest_netbench._compare.records import Record
from pytest_netbench._model import ERROR_KINDS, LoadResult, LoadSpec
from pytest_netbench._report.html import render_html_report, write_results_html
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

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


# -- per-host figures: a load whose shares ran on a cluster --------------------------------
_SPEC = LoadSpec(kind="http", host="198.18.0.20", port=8080, connections=8, duration_s=2.0,
                 workers=3, allow_remote=True)  # fmt: skip
_GONE = "Dask worker tcp://198.18.0.13:40000 on load-3: the scheduler has not heard from it"


def _share(host: str, n: int, latencies_us: dict[int, int], **errors: int) -> WorkerOutcome:
    counted = dict.fromkeys(ERROR_KINDS, 0) | errors
    return WorkerOutcome(
        sent=sum(latencies_us.values()) + sum(counted.values()),
        errors=counted,
        latency_counts=Counter(latencies_us),
        window_start_ns=1_000_000_000 + n * 250_000,
        window_end_ns=3_000_000_000,
        cpu_s=0.4,
        busy_s=0.9,
        host=host,
        worker=f"tcp://198.18.0.1{n}:40000",
    )


def _cluster_result(*, lost: bool = True) -> LoadResult:
    outcomes = [
        _share("load-1", 1, {120: 900, 300: 100}),
        _share("<load-2>", 2, {150: 500, 9000: 40}, timeout=3, connect=2),
    ]
    if lost:
        outcomes.append(WorkerOutcome(lost=_GONE, worker="tcp://198.18.0.13:40000", host="load-3"))
    return merge_outcomes(_SPEC, outcomes)


def _shares_tables(page: str) -> list[str]:
    return re.findall(r'<table class="shares">.*?</table></div>(?:<ul class="notes">.*?</ul>)?',
                      page, re.DOTALL)  # fmt: skip


def _cells(table: str) -> list[list[str]]:
    """Each row's cells as a reader sees them: tags dropped, entities read."""
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.DOTALL)
    cell = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.DOTALL)
    return [[unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cell.findall(r)] for r in rows]


def test_a_load_on_several_hosts_gets_a_row_per_host_and_a_lost_one_is_named() -> None:
    r = _cluster_result()
    page = render_html_report(
        records=[Record("t.py::test_get", "t.py::test_get", {}, r)],
        environment=ENVIRONMENT,
        plots=False,
        created=0.0,
    )
    assert "<h4>Per host</h4>" in page
    (shares,) = _shares_tables(page)
    cells = _cells(shares)
    assert cells[0] == ["share", "host", "sent", "ok", "errors", "in flight", "p50 ms", "p99 ms",
                        "max ms", "cpu", "busy", "start ms"]  # fmt: skip
    one, two, gone, total = cells[1:]
    assert one[:6] == ["0", "load-1 tcp://198.18.0.11:40000", "1,000", "1,000", "0", "0"]
    assert one[9:] == ["20%", "45%", "+0.00"]  # 0.4 s and 0.9 s of a 2 s window
    assert two[:5] == ["1", "<load-2> tcp://198.18.0.12:40000", "545", "540", "5"]
    assert two[-1] == "+0.25"
    assert float(two[7]) > float(one[7])  # the slower host's p99 stands out
    assert gone[:2] == ["2", "load-3 tcp://198.18.0.13:40000"]
    assert gone[2].startswith("LOST")
    assert total[1:6] == ["all shares", f"{r.sent:,}", f"{r.ok:,}", "5", "0"]
    assert total[-1] == "within 0.25"
    assert "&lt;load-2&gt;" in shares and "<load-2>" not in shares  # escaped, never markup
    assert 'title="connect 2, timeout 3"' in shares  # the error kinds on the errors cell
    assert "<tr class=invalid-row>" in shares
    notes = re.findall(r"<li[^>]*>(.*?)</li>", shares.split('<ul class="notes">', 1)[1])
    assert notes == [
        f"<b>lost</b>: share 2: {_GONE}",  # the transport's words name worker and host
        "share 1 on &lt;load-2&gt;: errors: connect 2, timeout 3",
    ]
    assert '<li class="invalid-note"><b>lost</b>: share 2:' in shares


def test_only_loads_on_several_hosts_get_the_table_each_named_by_its_parameters() -> None:
    one_share = merge_outcomes(_SPEC, [_share("load-1", 1, {120: 10})])
    records = [
        Record("t.py::test_get[a]", "t.py::test_get", {"server": "a"}, _cluster_result(lost=False)),
        Record("t.py::test_get[b]", "t.py::test_get", {"server": "b"}, make_result(900)),
        Record("t.py::test_get[c]", "t.py::test_get", {"server": "c"}, one_share),
    ]
    page = render_html_report(records=records, environment=ENVIRONMENT, plots=False, created=0.0)
    (shares,) = _shares_tables(page)
    assert "<caption>server=a</caption>" in shares
    assert "LOST" not in shares and "invalid-note" not in shares
    # A load on one host (local, or one share) has nothing to set apart: no table.
    for result in (make_result(900), one_share):
        alone = [Record("t.py::test_get", "t.py::test_get", {}, result)]
        page = render_html_report(records=alone, environment=ENVIRONMENT, plots=False)
        assert "Per host" not in page and 'class="shares"' not in page


def test_a_share_that_saturated_has_its_busy_figure_marked_and_a_note() -> None:
    hot = _share("load-1", 1, {9000: 300})
    hot.busy_s = 1.96  # running or waiting for a CPU 98% of the 2 s window
    r = merge_outcomes(_SPEC, [hot, _share("load-2", 2, {120: 900})])
    page = render_html_report(
        records=[Record("t.py::test_get", "t.py::test_get", {}, r)],
        environment=ENVIRONMENT,
        plots=False,
    )
    (shares,) = _shares_tables(page)
    marked = re.findall(r'<td class="num invalid" title="saturated:[^"]*">([^<]*)', shares)
    assert marked == ["98% "]  # load-1's busy cell alone, then its mark
    assert "<b>saturated</b>: share 0 on load-1 (tcp://198.18.0.11:40000) was running or" in (
        shares
    )
    assert "load-2" not in shares.split("<b>saturated</b>", 1)[1]


def test_a_streaming_load_shows_its_stream_figures() -> None:
    from pytest_netbench._model.sections import LatencySummary
    from pytest_netbench._model.streams import EventCounts, StreamStats
    from pytest_netbench._report.html.streams import streams_html

    record = Record("t.py::test_sse[a]", "t.py::test_sse", {"server": "a"}, make_result(900))
    summary = LatencySummary(count=3, p50_ms=51.0, p90_ms=52.0, p99_ms=53.0, max_ms=54.0)
    stream = StreamStats(
        "sse", 3, 60, 20.0, summary, summary, summary, summary, EventCounts(3, 20, 20, 20.0, 20)
    )
    record = dataclasses.replace(record, result=dataclasses.replace(record.result, stream=stream))
    html = "".join(streams_html([record], record.function))
    assert "<h4>Streams</h4>" in html
    assert "3 streams (sse), 60 events, 20.0 events/s" in html
    for row in ("first byte", "first event", "gap", "whole"):
        assert f"<td class=label>{row}</td>" in html
    assert streams_html([record], "another::test") == []
