"""The open-loop scheduler's timerfd timer: fires once per arming, never before its instant."""

from __future__ import annotations

import asyncio
import sys
from time import monotonic_ns

import pytest

from pytest_netbench._engine.asyncio_io.precise_timer import create_precise_timer
from pytest_netbench._engine.rules.timerfd import open_timerfd

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="timerfd is Linux")


def test_fires_once_per_arming_and_never_early() -> None:
    async def main() -> list[tuple[int, int]]:
        loop = asyncio.get_running_loop()
        fired: list[int] = []
        timer = create_precise_timer(loop, lambda: fired.append(monotonic_ns()))
        assert timer is not None
        targets = []
        try:
            for _ in range(5):
                when = monotonic_ns() + 2_000_000
                targets.append(when)
                timer.arm_at(when)
                while len(fired) < len(targets):
                    await asyncio.sleep(0.001)
            await asyncio.sleep(0.01)  # nothing more arrives without a new arming
        finally:
            timer.close()
        return list(zip(targets, fired, strict=True))

    pairs = asyncio.run(main())
    assert len(pairs) == 5
    assert all(fired >= when for when, fired in pairs)


def test_cancel_and_past_instants() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        count = [0]
        timer = create_precise_timer(loop, lambda: count.__setitem__(0, count[0] + 1))
        assert timer is not None
        try:
            timer.arm_at(monotonic_ns() + 5_000_000)
            timer.cancel()
            await asyncio.sleep(0.02)
            cancelled = count[0]
            timer.arm_at(1)  # an instant long past fires at once
            await asyncio.sleep(0.01)
            return cancelled, count[0]
        finally:
            timer.close()

    assert asyncio.run(main()) == (0, 1)


def test_trio_waits_on_the_same_timerfd_and_never_wakes_early() -> None:
    trio = pytest.importorskip("trio")
    timer = open_timerfd()
    assert timer is not None

    async def main() -> list[tuple[int, int]]:
        pairs = []
        for _ in range(5):
            when = monotonic_ns() + 2_000_000
            timer.arm_at(when)
            await trio.lowlevel.wait_readable(timer.fd)
            assert timer.consume()
            pairs.append((when, monotonic_ns()))
        assert not timer.consume()  # one expiry per arming
        return pairs

    try:
        pairs = trio.run(main)
    finally:
        timer.close()
    assert all(woke >= when for when, woke in pairs)
