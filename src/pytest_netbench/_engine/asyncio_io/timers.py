"""A run's loop timers, one slot per purpose, all cancelled when the run ends.

A run re-arms its sweeper, its timeline tick and its progress watcher every fraction of
a second for as long as it runs. Keeping every handle ever armed, to cancel them at the
end, grew a ten-minute soak's memory by about 1 KiB a second (issue 34); a slot keeps
only its purpose's latest handle, the only one that may still be pending.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class RunTimers:
    """``after(slot, delay, callback)`` replaces the slot's handle: arm a slot again only
    from its own callback (or after it fired), so the handle it drops has run."""

    __slots__ = ("_loop", "_slots")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._slots: dict[str, asyncio.TimerHandle] = {}

    def after(self, slot: str, delay_s: float, callback: Callable[[], None]) -> None:
        self._slots[slot] = self._loop.call_later(delay_s, callback)

    def cancel_all(self) -> None:
        for handle in self._slots.values():
            handle.cancel()
        self._slots.clear()

    def __len__(self) -> int:
        return len(self._slots)
