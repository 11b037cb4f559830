"""A load that its feeder's rows ended (``on_end="stop"``) says so in every rendering: the
text report (under its header), the Markdown (under its test's matrix) and the HTML report
(under its test's loads); a load that ran to its count says nothing of the kind. Real
loads against a real server, from a CSV of five rows."""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest
from recording_server import RecordingApp
from servers import ServerThread

from pytest_netbench import LoadResult, feeders, http_load
from pytest_netbench._compare.records import Record
from pytest_netbench._report.html.document import render_html_report
from pytest_netbench._report.matrix import build_matrices
from pytest_netbench._report.summary import format_result
from pytest_netbench._report.writers import MarkdownWriter, SessionOutputs

ENDED = 'ended when a feeder\'s rows ran out (on_end="stop"), before the 30 s asked for'


class _Settings:
    json_path = None
    benchmark_json_path = None
    plot_dir = None
    html_path = None

    def __init__(self, markdown_path: str) -> None:
        self.markdown_path = markdown_path


@pytest.fixture
def loads(tmp_path: Path) -> Iterator[tuple[LoadResult, LoadResult]]:
    """A load of five CSV rows with ``on_end="stop"`` and a 30 s bound, and a load of five
    requests numbered by a counter (it ends at its count)."""
    rows = tmp_path / "users.csv"
    rows.write_text("id,name\n" + "".join(f"{i},user{i}\n" for i in range(1, 6)))
    with ServerThread(RecordingApp()) as server:
        ran_out = http_load(
            server.url + "/users/${user.id}",
            feeders={"user": feeders.csv(rows, on_end="stop")},
            duration=30.0,
            connections=2,
        )
        counted = http_load(server.url + "/items/${n}", feeders={"n": feeders.count()}, requests=5)
    yield ran_out, counted


def test_a_load_its_feeder_ended_says_so_in_text_markdown_and_html(
    loads: tuple[LoadResult, LoadResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran_out, counted = loads
    assert ran_out.generator.feeders_ran_out and ran_out.sent == ran_out.ok == 5
    assert not counted.generator.feeders_ran_out and counted.ok == 5

    text = format_result(ran_out).splitlines()
    # Under the header (its last line the loop's), before the figures.
    ended = text.index(f"  {ENDED}")
    assert text[ended - 1].startswith("  closed loop, ")
    assert ended < text.index("Throughput")
    assert "ended when" not in format_result(counted)

    records = [
        Record("t.py::test_rows[csv]", "t.py::test_rows", {"feeder": "csv"}, ran_out),
        Record("t.py::test_rows[count]", "t.py::test_rows", {"feeder": "count"}, counted),
    ]
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    markdown_path = tmp_path / "report.md"
    MarkdownWriter().write(
        SessionOutputs(
            settings=_Settings(str(markdown_path)),
            records=records,
            matrices=build_matrices(records),
            _environment={},
        )
    )
    markdown = markdown_path.read_text()
    assert f"\n- feeder=csv: {ENDED}\n" in markdown
    assert markdown.count("ended when") == 1

    page = render_html_report(records=records, plots=False, environment={})
    assert f'<ul class="notes"><li>feeder=csv: {escape(ENDED)}</li></ul>' in page
    assert page.count("ended when") == 1
