"""A flow load in the reports (issue 21): the text heading names its flows with their
weights and its model (users, or sessions at a rate); the Markdown and HTML files show its
Sessions table. Flows run for real against the shop on loopback (shop_app.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shop_flows
from servers import ServerThread
from shop_app import ShopApp

from pytest_netbench import LoadResult, flow
from pytest_netbench._cli.outputs import CommandFiles
from pytest_netbench._flow.api import flow_spec
from pytest_netbench._report.html import write_html_report
from pytest_netbench._report.html.results import results_to_records
from pytest_netbench._report.matrix import build_matrices
from pytest_netbench._report.sessions import flow_model
from pytest_netbench._report.summary import format_result
from pytest_netbench._report.writers import MarkdownWriter, command_outputs


async def refused(client: Any) -> None:
    """Lists the items without a token: the shop answers 401, and the session fails."""
    (await client.get("/items")).raise_for_status()


@pytest.fixture(scope="module")
def weighted() -> Iterator[LoadResult]:
    """Two flows by weight, 24 sessions, some failing at GET /items by status."""
    with ServerThread(ShopApp()) as server:
        yield flow(
            {shop_flows.shopper: 3, refused: 1},
            server.url,
            users=2,
            sessions=24,
            client="lean",
        )


def test_the_heading_names_the_flows_their_weights_and_the_users(weighted: LoadResult) -> None:
    text = format_result(weighted, width=200)
    first, second = text.splitlines()[:2]
    assert first == (
        f"Flows by weight: shop_flows:shopper x3, test_flow_report:refused x1 on {weighted.url}"
    )
    assert second.startswith("  closed model, ") and second.endswith(" s measured, 2 users")
    assert "GET " + weighted.url not in text


def test_the_heading_of_one_flow_and_of_the_open_model() -> None:
    closed, _ = flow_spec("http://127.0.0.1:9/", users=5, stages=[(1, 10)])
    assert flow_model(closed) == ["closed model", "stages 1s:10 from 5 users"]
    open_, _ = flow_spec("http://127.0.0.1:9/", users=5, rate=50)
    assert flow_model(open_) == [
        "open model",
        "sessions at 50/s (uniform)",
        "5 users growing up to 1,024",
    ]
    held, _ = flow_spec("http://127.0.0.1:9/", users=5, rate=50, max_users=5)
    assert flow_model(held)[-1] == "5 users"


def _sessions_row(weighted: LoadResult) -> list[str]:
    stats = weighted.sessions
    assert stats is not None and stats.failed > 0 and stats.completed > 0
    d = stats.duration
    return [
        "shop_flows:shopper x3, test_flow_report:refused x1",
        "2",
        f"{stats.started:,}",
        f"{stats.completed:,}",
        f"{stats.failed:,}",
        f"{stats.in_progress:,}",
        "0",
        *(f"{v:,.1f}" for v in (d.p50_ms, d.p90_ms, d.p99_ms, d.max_ms)),
        f"GET /items {stats.failed:,}",
        f"status {stats.failed:,}",
    ]


def test_the_markdown_shows_the_sessions_table(weighted: LoadResult, tmp_path: Path) -> None:
    path = tmp_path / "flow.md"
    settings = CommandFiles(markdown_path=str(path))
    MarkdownWriter().write(command_outputs(settings, weighted, name="netbench flow"))
    text = path.read_text()
    table = text.split("#### Sessions\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0] == (
        "| flows | users | started | completed | failed | in progress | not started | p50 ms"
        " | p90 ms | p99 ms | max ms | failed at | failed by |"
    )
    assert table[2] == "| " + " | ".join(_sessions_row(weighted)) + " |"
    assert "think time included" in text


def test_the_html_shows_the_sessions_table(weighted: LoadResult, tmp_path: Path) -> None:
    records, experiments = results_to_records([weighted], name="netbench flow")
    path = tmp_path / "flow.html"
    write_html_report(
        path,
        records=records,
        experiments=experiments,
        matrices=build_matrices(records),
        comparisons=[],
        environment={},
        title="flow",
    )
    page = path.read_text()
    table = re.search(r'<h4>Sessions</h4>.*?<table class="sessions">(.*?)</table>', page, re.S)
    assert table is not None, page[:2000]
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)
    cells = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row) for row in rows]
    assert cells[0][:3] == ["flows", "users", "started"] and cells[0][-1] == "failed by"
    assert cells[1] == _sessions_row(weighted)
