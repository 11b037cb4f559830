"""A command's live side: Ctrl-C stops the run cleanly, and progress shows on a terminal.

The first Ctrl-C (SIGINT) asks the run to stop: the load ends within about 0.1 s and the
command prints and writes what was measured, marked interrupted, then exits 130. A second
Ctrl-C gives up at once. A process started with SIGINT ignored (``nohup``, ``cmd &`` in a
script) keeps it ignored. Progress is drawn on stderr when it is a terminal outside CI, or
when ``--progress`` asks for it; ``--no-progress`` turns it off.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import TextIO

from pytest_netbench._model.live import ProgressCallback, StopSignal
from pytest_netbench._report.progress import ProgressLine


def progress_wanted(flag: bool | None, stream: TextIO) -> bool:
    """``--progress``/``--no-progress`` if given; else only on a terminal outside CI."""
    if flag is not None:
        return flag
    interactive = hasattr(stream, "isatty") and stream.isatty()
    return interactive and os.environ.get("TERM") != "dumb" and not os.environ.get("CI")


class CommandLive:
    """``with CommandLive(progress=...) as live:`` for the length of one command."""

    def __init__(self, *, progress: bool | None, quiet: bool = False) -> None:
        self.stop = StopSignal()
        self.quiet = quiet
        self._line = ProgressLine(sys.stderr) if progress_wanted(progress, sys.stderr) else None
        self._installed = False

    @property
    def progress(self) -> ProgressCallback | None:
        return self._line.update if self._line is not None else None

    def say(self, *lines: str) -> None:
        """Print report lines on stdout (unless ``--quiet``), clear of the progress line."""
        if self.quiet or not lines:
            return
        self.clear()
        print("\n".join(lines), flush=True)

    def clear(self) -> None:
        if self._line is not None:
            self._line.clear()

    def __enter__(self) -> CommandLive:
        # Only the main thread may set handlers. SIGINT ignored (started detached) or owned
        # by an embedding program: leave it be.
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self._installed = False
        self.clear()

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        # No output here: a write from a signal handler can land inside another write.
        if self.stop.requested:
            raise KeyboardInterrupt  # the second Ctrl-C: stop now, whatever it costs
        self.stop.request()
