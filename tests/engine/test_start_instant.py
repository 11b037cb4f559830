"""A share never begins before its start instant: uvloop's millisecond timers wake up to
a millisecond early, and a request sent then would be warm-up, unmeasured, though the
server answers it (a 31-request run once put 32 on the wire)."""

from __future__ import annotations

from time import monotonic_ns

import pytest

from pytest_netbench._engine.shares.driver import _sleep_until, run_on_loop


@pytest.mark.parametrize("loop_name", ["uvloop", "asyncio"])
def test_sleeping_until_an_instant_never_wakes_before_it(loop_name: str) -> None:
    async def lateness() -> list[int]:
        late = []
        for i in range(150):
            # Instants between two milliseconds, where a millisecond clock rounds.
            target = monotonic_ns() + 1_000_000 + i * 7_919
            await _sleep_until(target)
            late.append(monotonic_ns() - target)
        return late

    assert min(run_on_loop(loop_name, lateness)) >= 0
