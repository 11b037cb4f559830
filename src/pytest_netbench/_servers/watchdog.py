"""The watchdog: sweeps its owner's servers, and their logs, when the owner dies.

Run by :mod:`.reaper` as ``python -P -m pytest_netbench._servers.watchdog TOKEN SINCE GRACE``
with a pipe from the owner on stdin. It reads /proc with the standard library only, so it
starts in milliseconds. Lines on stdin:

* ``+<pgid>`` registers a server's process group, ``-<pgid>`` forgets it;
* ``d<path>`` names a log directory of the owner's;
* ``clean`` says the owner is exiting normally and has dealt with its directories.

End of input means the owner is gone (closed the pipe at exit, or died: SIGKILL, a crash,
the OOM killer). Then every live process whose ``NETBENCH_OWNER`` chain holds TOKEN and
that started after SINCE (clock ticks since boot, a guard against pid reuse), and every
registered group, gets SIGTERM once, and SIGKILL after GRACE seconds. Without ``clean``,
the owner's log directories are removed afterwards, unless a process of the owner still
holds them (see :mod:`.logdirs`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable

from pytest_netbench._servers import logdirs

_OWNER_MARKER = b"NETBENCH_OWNER="  # reaper.OWNER_ENV; reaper imports this module
_GIVE_UP_AFTER_GRACE_S = 10.0  # unkillable (D state) processes: stop trying eventually
_POLL_S = 0.05


class Orders:
    """What the owner said on the pipe before it went away."""

    def __init__(self) -> None:
        self.groups: set[int] = set()
        self.directories: set[str] = set()
        self.clean = False

    def read(self, lines: Iterable[str]) -> None:
        for raw in lines:
            line = raw.rstrip("\n")
            if line[:1] == "+" and line[1:].isdigit():
                self.groups.add(int(line[1:]))
            elif line[:1] == "-" and line[1:].isdigit():
                self.groups.discard(int(line[1:]))
            elif line.startswith("d"):
                self.directories.add(line[1:])
            elif line == "clean":
                self.clean = True


def start_ticks(pid: int | str) -> int:
    """Start time in clock ticks since boot, field 22 of /proc/<pid>/stat; 0 if unknown."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None else 0


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (state is the first)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields if len(fields) > 19 else None


def survivors(token: str, since: int, groups: set[int]) -> tuple[list[int], set[int]]:
    """Live processes marked with ``token`` (started after ``since``), and live ``groups``."""
    pids: list[int] = []
    live_groups: set[int] = set()
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        fields = _stat_fields(name)
        try:
            if fields is None or fields[0] in (b"Z", b"X") or int(fields[19]) < since:
                continue
            if int(fields[2]) in groups:
                live_groups.add(int(fields[2]))
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except (OSError, ValueError):
            continue
        if _marked_with(environ, token):
            pids.append(int(name))
    return pids, live_groups


def _marked_with(environ: bytes, token: str) -> bool:
    for entry in environ.split(b"\0"):
        if entry.startswith(_OWNER_MARKER):
            chain = entry[len(_OWNER_MARKER) :].decode("ascii", "replace")
            return token in chain.split(":")
    return False


def sweep(token: str, since: int, groups: set[int], grace: float) -> None:
    """SIGTERM once to each survivor and group, SIGKILL as often as needed after ``grace``."""
    start = time.monotonic()
    signalled: set[tuple[str, int]] = set()
    while time.monotonic() - start < grace + _GIVE_UP_AFTER_GRACE_S:
        pids, live_groups = survivors(token, since, groups)
        if not pids and not live_groups:
            return
        killing = time.monotonic() - start >= grace
        sig = signal.SIGKILL if killing else signal.SIGTERM
        for pgid in sorted(live_groups):
            if killing or ("g", pgid) not in signalled:
                signalled.add(("g", pgid))
                _send(os.killpg, pgid, sig)
        for pid in pids:
            if killing or ("p", pid) not in signalled:
                signalled.add(("p", pid))
                _send(os.kill, pid, sig)
        time.sleep(_POLL_S)


def _send(send: Callable[[int, int], None], target: int, sig: signal.Signals) -> None:
    with contextlib.suppress(OSError):  # gone already, or not ours to signal
        send(target, sig)


def main(argv: list[str]) -> None:
    token, since, grace = argv[0], int(argv[1]), float(argv[2])
    # Set, not inherited: a Ctrl-C or hang-up that kills the owner must leave us to sweep.
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    orders = Orders()
    orders.read(sys.stdin)
    sweep(token, since, orders.groups, grace)
    if not orders.clean:
        for path in sorted(orders.directories):
            logdirs.remove_if_abandoned(path)


if __name__ == "__main__":
    main(sys.argv[1:])
