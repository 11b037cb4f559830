"""Run a command to completion and take its CPU time and peak RSS from ``wait4``.

``wait4`` gives the rusage of exactly that child (wrk, or a pinned netbench generator),
which neither ``RUSAGE_CHILDREN`` (every child so far) nor sampling can give as cleanly.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from dataclasses import dataclass
from subprocess import Popen


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str
    cpu_s: float  # user + system
    max_rss_kib: int


def run_measured(argv: list[str], *, timeout_s: float = 120.0) -> Finished:
    """Run ``argv``; kill it if it outlives ``timeout_s``; return output and its rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = Popen(argv, stdout=out, stderr=err)
        killer = threading.Timer(timeout_s, os.kill, (proc.pid, signal.SIGKILL))
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # stop Popen from reaping again
        out.seek(0)
        err.seek(0)
        return Finished(
            returncode=proc.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            cpu_s=usage.ru_utime + usage.ru_stime,
            max_rss_kib=usage.ru_maxrss,
        )
