"""Load that changes over time (``stages=``) against a real loopback server, on every loop:
the count sent follows the ramp, the connections the server sees follow the connection
stages, and the counting rules hold. Counts and invariants only, never a time or a rate."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from servers import ServerThread

from pytest_netbench import LoadResult, Stage, http_load

NS = 1_000_000_000


@dataclass
class CountingApp:
    """A keep-alive HTTP server that notes when each connection opened and closed (on
    CLOCK_MONOTONIC, system-wide) and answers every request after ``delay_s``."""

    delay_s: float = 0.002
    events: list[tuple[int, int]] = field(default_factory=list)  # (ns, +1 open / -1 closed)
    requests: int = 0
    unanswered: int = 0  # connections closed by the client with a request unanswered

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.events.append((time.monotonic_ns(), 1))
        try:
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests += 1
                await asyncio.sleep(self.delay_s)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                try:
                    await writer.drain()
                except ConnectionError:
                    self.unanswered += 1
                    return
        finally:
            self.events.append((time.monotonic_ns(), -1))
            writer.close()

    def open_at(self, t_ns: int) -> int:
        return sum(step for at, step in self.events if at <= t_ns)

    def mean_open(self, from_ns: int, to_ns: int, samples: int = 200) -> float:
        step = (to_ns - from_ns) / samples
        return sum(self.open_at(int(from_ns + i * step)) for i in range(samples)) / samples

    def peak_open(self) -> int:
        open_now = peak = 0
        for _, step in sorted(self.events):
            open_now += step
            peak = max(peak, open_now)
        return peak


# Every loop follows the ramp; how a ramp is split over worker processes is the driver's,
# whatever the loop, so two workers run on one loop only.
LOOPS_AND_WORKERS = [("uvloop", 1), ("asyncio", 1), ("trio", 1), ("trio", 2)]


@pytest.mark.parametrize(("loop", "workers"), LOOPS_AND_WORKERS)
def test_an_open_loop_ramp_sends_what_its_integral_holds(
    loop: str, workers: int, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    """0 -> 400 req/s over 2 s holds 400 requests, a quarter of them in the first second,
    whether one worker sends them or two share the ramp."""
    app = CountingApp()
    with ServerThread(app) as server:
        result = consistent(
            http_load(
                server.url,
                rate=0,
                stages=[("2s", 400)],
                connections=4,
                workers=workers,
                loop=loop,
            )
        )
    assert result.mode == "open"
    assert result.spec is not None and result.spec.duration_s == 2.0
    # Every request due inside the window is sent (late if it must): a count, not a time.
    # The last one falls due at the deadline itself and may fall on either side of it.
    assert 398 <= result.sent <= 400
    assert result.errors_total == 0
    assert result.generator.intended_rate == pytest.approx(200.0)
    first, second = (row.ok for row in result.timeline[:2])
    assert first + second >= 0.9 * result.ok
    assert 1.8 <= second / max(first, 1) <= 5.0  # 3 by the integral; wide for a busy box


def test_a_flat_stage_and_a_stage_at_zero(
    loop: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    """200 req/s held for 1 s, down to 0 over 0.5 s, 0 for 1 s: 250 requests in all."""
    app = CountingApp()
    stages = [Stage(1.0, 200), ("0.5s", 0), {"duration": "1s", "target": 0}]
    with ServerThread(app) as server:
        result = consistent(http_load(server.url, rate=200, stages=stages, loop=loop))
    assert 248 <= result.sent <= 250
    assert result.ok == app.requests == result.sent
    # The pause sends nothing: no answer in the row that begins at 2 s (if it has a row).
    assert sum(row.ok for row in result.timeline if row.start_s >= 2.0) == 0
    assert result.timeline[0].ok >= 150  # the flat second (200 by the schedule)


@pytest.mark.parametrize(("loop", "workers"), LOOPS_AND_WORKERS)
def test_closed_loop_connections_follow_the_stages(
    loop: str, workers: int, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    """0 -> 6 connections over 2 s, 6 held for 1.5 s, down to 0 over 1 s (and 0.5 s at 0, so
    a busy machine's late timer still sheds the last one inside the window): the server sees
    six connections, their mean count per stage follows the ramp, and the ramp down closes
    each once its request is answered: nothing cut short, nothing in flight at the end."""
    app = CountingApp(delay_s=0.005)
    with ServerThread(app) as server:
        result = consistent(
            http_load(
                server.url,
                stages=[("2s", 6), ("1.5s", 6), ("1s", 0), ("0.5s", 0)],
                workers=workers,
                loop=loop,
            )
        )
    assert result.mode == "closed"
    assert app.peak_open() == 6
    assert len([e for e in app.events if e[1] == 1]) == 6  # none reopened, none lost
    assert app.open_at(time.monotonic_ns()) == 0
    assert result.errors_total == 0 and result.in_flight == 0 and app.unanswered == 0
    assert result.generator.connections_opened == 6
    # The ramp's first connection is due when it reaches 0.5, 1/6 s in: the start found
    # from it is a little late (by a connect), and each stage's mean count is within one
    # connection of the ramp's (3 while rising, 6 flat, 3 while falling).
    began = min(at for at, _ in app.events) - NS // 6
    assert app.mean_open(began, began + 2 * NS) == pytest.approx(3.0, abs=1.0)
    assert app.mean_open(began + 2 * NS + NS // 4, began + 3 * NS + NS // 4) > 5.0
    assert app.mean_open(began + int(3.5 * NS), began + int(4.5 * NS)) == pytest.approx(3, abs=1)


def test_connections_pause_at_zero_and_come_back(
    loop: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    """Up to 3, held, down to 0, a 1 s pause, up to 3 again: the server sees three
    connections, none during the pause, then three new ones."""
    app = CountingApp(delay_s=0.005)
    stages = [("0.5s", 3), ("1s", 3), ("0.5s", 0), ("1s", 0), ("0.5s", 3), ("0.5s", 3)]
    with ServerThread(app) as server:
        result = consistent(http_load(server.url, stages=stages, loop=loop))
    began = min(at for at, _ in app.events) - NS // 12  # the first is due at 0.5 of 3
    assert len([e for e in app.events if e[1] == 1]) == 6
    assert app.peak_open() == 3
    assert app.open_at(began + int(2.5 * NS)) == 0  # the middle of the pause
    assert result.errors_total == 0 and app.unanswered == 0
    assert result.timeline[-1].connections == 3
