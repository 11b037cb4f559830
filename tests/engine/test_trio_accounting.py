"""The trio engine's counting when a task wakes between ``stop()`` and its cancellation.

On a server killed mid-run, a connect refused or a reset can be delivered to a task after
the deadline's ``stop()`` already counted its request as in flight; counting it again as an
error broke ``sent == ok + errors_total + in_flight`` (seen on a loaded CI machine). This
replays that order of events on a real run object inside a real trio loop.
"""

from __future__ import annotations

from time import monotonic_ns

import pytest
import trio

from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._engine.trio_io.run import TrioRun
from pytest_netbench._engine.trio_io.slot import Slot
from pytest_netbench._model import LoadSpec


@pytest.mark.parametrize("rate", [None, 100.0], ids=["closed", "open"])
def test_a_failure_after_stop_is_not_counted_twice(rate: float | None) -> None:
    spec = LoadSpec(kind="http", host="127.0.0.1", port=9, connections=1, rate=rate)

    async def replay() -> tuple[int, int, int, int]:
        share = split_load(spec)[0]
        run = TrioRun(spec, share, build_exchange(spec), monotonic_ns())
        now = monotonic_ns()
        assert run.take(now)
        slot = Slot()
        slot.pending.append(now)
        slot.intended.append(now)
        run.slots.add(slot)
        run.stop()
        run.fail(slot, "connect", ConnectionRefusedError(111, "Connection refused"))
        rec = run.recorder
        return rec.sent, len(rec.latencies), sum(rec.errors.values()), run.in_flight

    sent, ok, errors, in_flight = trio.run(replay)
    assert (sent, ok, errors, in_flight) == (1, 0, 0, 1)
