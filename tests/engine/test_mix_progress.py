"""Progress of a request mix counts its ok responses as they come (issue 34).

On asyncio and uvloop a closed-loop keep-alive mix runs on the fused path, which records
each ok response's latency under its kind and settles the counts only when a connection
ends; the progress snapshot (``watch.snapshot``) must count those samples as
``Recorder.ok_so_far`` does, not only the load's own ones, or a mix's progress lags until
the timeline folds them (a second, or never before the end with a coarse timeline).
"""

from __future__ import annotations

import asyncio
from time import monotonic_ns

from servers import ServerThread

from pytest_netbench import Request, http_spec
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.shares.driver import run_share
from pytest_netbench._model.live import ShareSnapshot

ANSWERS = 20  # per connection, then silence
CONNECTIONS = 2


class AnswerThenHold:
    """Answers the first ANSWERS requests of each connection ``200 ok`` (keep-alive), then
    reads on and answers nothing: the ok count a load can reach is exact."""

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for _ in range(ANSWERS):
                await reader.readuntil(b"\r\n\r\n")
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            while await reader.read(65536):
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            return


def test_progress_of_a_mix_counts_its_ok_responses(loop: str) -> None:
    mix = [Request("GET", "/a", name="a"), Request("POST", "/b", body="x", name="b")]
    with ServerThread(AnswerThenHold()) as server:
        spec = http_spec(
            server.url,
            mix=mix,
            loop=loop,
            connections=CONNECTIONS,
            duration=2.0,
            # No timeline row closes while the load runs (trio keeps whole seconds): what
            # the reports count must come from the samples as they are recorded.
            timeline_resolution=1.0 if loop == "trio" else 10.0,
        )
        share = split_load(spec)[0]
        snapshots: list[ShareSnapshot] = []
        watch = ShareWatch(report=snapshots.append, report_every_s=0.1)
        outcome = run_share(spec, share, monotonic_ns(), watch)
    answered = ANSWERS * CONNECTIONS
    assert outcome.sent == answered + CONNECTIONS  # each connection's last one unanswered
    assert outcome.in_flight == CONNECTIONS
    assert snapshots
    last = snapshots[-1]
    # Every answer came within milliseconds of the start; the reports of the 2 s that
    # followed count them all, and each one sent (the unanswered ones too).
    assert (last.completed, last.errors) == (answered, 0), snapshots
    assert last.sent == answered + CONNECTIONS
