"""A mix's requests seen on their own in experiments (issue 18), on a real server: a
capacity search judged on one request kind's figure (``by_request.slow.p50_ms``), a
sweep's steps, and what each step keeps of each kind in its JSON, its text and the tables
of a pytest session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from servers import ServerThread

from pytest_netbench import Request, capacity, sweep
from pytest_netbench._compare.records import ExperimentRecord, without_nan
from pytest_netbench._report.experiment_tables import (
    build_experiment_tables,
    render_experiment_markdown,
    render_experiment_text,
)
from pytest_netbench._report.experiments import answer_step, format_capacity, format_sweep

MIX = [Request("GET", "/fast", name="fast"), Request("GET", "/slow", name="slow")]


async def _app(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """``/slow`` answered after 20 ms, anything else at once."""
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return
        if head.split(b" ", 2)[1] == b"/slow":
            await asyncio.sleep(0.02)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()


@pytest.fixture
def server() -> Iterator[ServerThread]:
    with ServerThread(_app) as running:
        yield running


def _stored(data: dict[str, object]) -> dict[str, object]:
    """As a session's JSON keeps it (NaN as null), read back."""
    stored: dict[str, object] = json.loads(json.dumps(without_nan(data)))
    return stored


def test_capacity_judges_a_request_kind_and_shows_each_kind_at_the_answer(
    server: ServerThread,
) -> None:
    # Met at every rate (the slow kind's median is its 20 ms sleep): the search climbs to
    # max_rate, which it verified, and says the capacity is at least that.
    result = capacity(
        server.url,
        mix=MIX,
        slo="by_request.slow.p50_ms >= 15",
        start_rate=40,
        max_rate=80,
        duration=0.5,
        connections=4,
    )
    assert result.rate is None and result.at_least == 80, result.reason
    for step in result.steps:
        assert step.verdict == "pass", step.why
        check = step.checks[0]
        assert check.term.metric == "by_request.slow.p50_ms"
        assert check.value == step.result.by_request["slow"].p50_ms

        kinds = step.to_dict()["by_request"]
        assert list(kinds) == ["fast", "slow"]
        assert sum(k["sent"] for k in kinds.values()) == step.result.sent
        for name, figures in kinds.items():
            stats = step.result.by_request[name]
            assert figures["sent"] == stats.sent == stats.ok + stats.errors_total + stats.in_flight
            assert figures["p99_ms"] == stats.p99_ms and figures["rps"] == stats.rps

    at = answer_step(result)
    assert at is not None and at.rate == 80 and at.verdict == "pass"
    text = format_capacity(result)
    assert "Per request at 80 req/s: fast p50 " in " ".join(text.split())

    record = ExperimentRecord("t.py::test_c", "test_c", {}, "capacity", _stored(result.to_dict()))
    (table,) = build_experiment_tables([record])
    note = next(n for n in table.notes if n.startswith("per request at 80 req/s: "))
    assert "fast p50 " in note and "; slow p50 " in note
    assert "per request at 80 req/s" in render_experiment_markdown(table)


def test_a_sweep_of_a_mix_shows_each_kind_under_each_rate(server: ServerThread) -> None:
    result = sweep(server.url, rates=[20, 40], mix=MIX, duration=0.5, connections=4)
    assert len(result.steps) == 2

    text = format_sweep(result).splitlines()
    record = ExperimentRecord("t.py::test_s", "test_s", {}, "sweep", _stored(result.to_dict()))
    (table,) = build_experiment_tables([record])
    assert len(table.rows) == 2 * 3  # each rate, then its two kinds
    for index, step in enumerate(result.steps):
        kinds = step.to_dict()["by_request"]
        assert list(kinds) == ["fast", "slow"]
        assert sum(k["ok"] for k in kinds.values()) == step.result.ok
        # The text: a row per kind right under the step's row, the kind's errors last.
        row = next(i for i, line in enumerate(text) if line.split()[:1] == [f"{step.rate:.0f}"])
        assert [text[row + 1].split()[0], text[row + 2].split()[0]] == ["fast", "slow"]
        assert text[row + 2].split()[-1] == str(step.result.by_request["slow"].errors_total)
        # The session's table: the same, in the step's columns.
        fast, slow = table.rows[3 * index + 1], table.rows[3 * index + 2]
        assert (fast[0].strip(), slow[0].strip()) == ("fast", "slow")
        assert slow[table.headers.index("errors")] == "0"
    assert table.notes[0].startswith("a row named after a request is that request")
    markdown = render_experiment_markdown(table)
    assert "|   slow |" in markdown
    assert "  slow " in render_experiment_text(table)
