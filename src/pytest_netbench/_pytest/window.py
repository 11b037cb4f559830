"""The measured window: the only part of a test that must have the machine to itself.

Under ``pytest -n N`` every worker would otherwise drive load at the same time and each
would measure the others' noise. A cross-process file lock around the load alone keeps
windows apart while server start-up, builds and ordinary tests still run in parallel.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

LOCK_INPUT_KEY = "netbench_window_lock"
# A load never lasts this long; waiting longer means a worker hung while holding the lock.
_LOCK_WAIT_S = 3600.0


@dataclass(slots=True)
class WindowTimes:
    started: float = 0.0
    ended: float = 0.0
    waited_s: float = 0.0


class MeasuredWindow:
    """Serialises measured windows across processes when a lock path is given."""

    def __init__(self, lock_path: str | None) -> None:
        self.lock_path = lock_path

    @contextmanager
    def hold(self) -> Iterator[WindowTimes]:
        times = WindowTimes()
        asked = time.time()
        if self.lock_path is None:
            times.started = asked
            try:
                yield times
            finally:
                times.ended = time.time()
            return
        from filelock import FileLock

        with FileLock(self.lock_path, timeout=_LOCK_WAIT_S):
            times.started = time.time()
            times.waited_s = times.started - asked
            try:
                yield times
            finally:
                times.ended = time.time()
