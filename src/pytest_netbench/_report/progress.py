"""The live progress line: one line on a terminal, redrawn in place, as k6 shows a run.

``step 3/20: 600 req/s  2.4s/5s  [=========>          ]  598 req/s  1,432 done
0 errors  2.6s left``, and on a cluster each host's own counts after a ``|``. It waits
``after_s`` before drawing anything, so a short run prints no progress at all, and
:meth:`ProgressLine.clear` erases it before other output is printed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from time import monotonic
from typing import TextIO

from pytest_netbench._model.live import HostProgress, LoadProgress

_BAR_WIDTH = 20
_ERASE_TO_END = "\x1b[K"


def format_progress(progress: LoadProgress) -> str:
    """The line's text for one report (no control characters)."""
    parts: list[str] = []
    if progress.step is not None:
        step = f"step {progress.step}"
        if progress.steps is not None:
            step += f"/{progress.steps}"
        parts.append(f"{step}: {progress.label}" if progress.label else step)
    parts += _time_and_bar(progress)
    if not progress.starting:
        parts.append(f"{progress.rate:,.0f} req/s")
        done = f"{progress.completed:,}"
        if progress.requests is not None:
            done += f"/{progress.requests:,}"
        parts.append(f"{done} done")
        parts.append(f"{progress.errors:,} error" + ("" if progress.errors == 1 else "s"))
        left = progress.remaining_s
        if left is not None:
            parts.append(f"{_seconds(left)} left")
        if progress.hosts:
            parts.append("|  " + "  ".join(_host(h) for h in progress.hosts))
    return "  ".join(parts)


def _host(host: HostProgress) -> str:
    """``10.0.0.5: 1,234 done, 0 errors``: one cluster host's shares together."""
    errors = f"{host.errors:,} error" + ("" if host.errors == 1 else "s")
    return f"{host.host}: {host.completed:,} done, {errors}"


def _time_and_bar(progress: LoadProgress) -> list[str]:
    if progress.starting:
        return ["starting workers"]
    if progress.warming_up:
        return [f"warm-up {_seconds(progress.elapsed_s)}/{_seconds(progress.warmup_s)}"]
    measured = progress.elapsed_s - progress.warmup_s
    if progress.duration_s is not None:
        # The last report can come a moment after the deadline, while the load winds down.
        measured = min(measured, progress.duration_s)
        fraction = measured / progress.duration_s if progress.duration_s > 0 else 1.0
        return [f"{_seconds(measured)}/{_seconds(progress.duration_s)}", _bar(fraction)]
    if progress.requests:
        return [_seconds(measured), _bar(progress.completed / progress.requests)]
    return [_seconds(measured)]


def _bar(fraction: float) -> str:
    filled = round(min(max(fraction, 0.0), 1.0) * _BAR_WIDTH)
    if filled >= _BAR_WIDTH:
        return "[" + "=" * _BAR_WIDTH + "]"
    return "[" + "=" * filled + ">" + " " * (_BAR_WIDTH - filled - 1) + "]"


def _seconds(value: float) -> str:
    if value >= 3600:
        return f"{int(value // 3600)}h{int(value % 3600 // 60):02d}m"
    if value >= 60:
        return f"{int(value // 60)}m{int(value % 60):02d}s"
    return f"{value:.1f}s"


class ProgressLine:
    """Draws :class:`LoadProgress` reports on ``stream`` (a terminal), one line in place.

    Nothing is drawn until ``after_s`` has passed since the line was made (the start of
    the command): progress is for runs long enough to wonder about.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        after_s: float = 2.0,
        clock: Callable[[], float] = monotonic,
    ) -> None:
        self._stream = stream
        self._clock = clock
        self._show_from = clock() + after_s
        self._shown = False

    def update(self, progress: LoadProgress) -> None:
        if self._clock() < self._show_from:
            return
        width = self._width()
        # One column short of the width: a full line would wrap on some terminals.
        text = format_progress(progress)[: max(width - 1, 10)]
        self._stream.write("\r" + text + _ERASE_TO_END)
        self._stream.flush()
        self._shown = True

    def _width(self) -> int:
        """The width of the terminal the line is drawn on (stdout may be a pipe)."""
        try:
            return os.get_terminal_size(self._stream.fileno()).columns
        except (OSError, ValueError):
            return shutil.get_terminal_size().columns

    def clear(self) -> None:
        """Erase the line (before printing anything else on the terminal)."""
        if self._shown:
            self._stream.write("\r" + _ERASE_TO_END)
            self._stream.flush()
            self._shown = False
