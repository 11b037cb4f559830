"""The temp directory holding the logs of the servers one process starts, and clearing away
those of processes that are gone.

Each owner process makes one ``netbench-servers-*`` directory and holds an ``flock`` on the
``owner.lock`` file in it for the rest of its life. The kernel drops that lock however the
process ends (SIGKILL and crashes included), so a lock that can be taken means no process of
that owner is left (a forked child keeps the lock, and with it the directory, while it
lives). A directory is only ever removed while its lock is held by the remover, so a live
owner's directory is never touched; nor is one without a lock file (made by an older
version, whose owner cannot be told apart from a live one).

Standard library only: the watchdog imports this module too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile

PREFIX = "netbench-servers-"
LOCK_NAME = "owner.lock"
# Ended owners' directories kept at start-up: a failed server's log stays readable after
# its run (the error message points at it), even when the user starts the next run before
# opening it, and the temp dir still stops growing.
KEEP_ENDED = 5

# Lock fds of the directories this process made: open (locked) until the process ends.
_held: list[int] = []


def create(parent: str | None = None) -> str:
    """A new directory owned (locked) by this process, in ``parent`` or the temp dir."""
    path = tempfile.mkdtemp(prefix=PREFIX, dir=parent)
    # Locked under a private name, then renamed: a lock file others can see is always held.
    staging = os.path.join(path, f".{LOCK_NAME}.{os.getpid()}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(staging, os.path.join(path, LOCK_NAME))
    except BaseException:
        os.close(fd)
        shutil.rmtree(path, ignore_errors=True)
        raise
    _held.append(fd)
    return path


def remove_if_empty(path: str) -> None:
    """Remove ``path`` if nothing but its lock is left in it (this process is done with it)."""
    with contextlib.suppress(OSError):
        if os.listdir(path) == [LOCK_NAME]:
            os.remove(os.path.join(path, LOCK_NAME))
            os.rmdir(path)


def remove_if_abandoned(path: str) -> bool:
    """Remove ``path`` if its owner is gone; False when it lives (or it is not ours)."""
    fd = _lock_if_abandoned(path)
    if fd is None:
        return False
    try:
        shutil.rmtree(path, ignore_errors=True)
    finally:
        os.close(fd)
    return True


def remove_abandoned(parent: str | None = None, keep: int = KEEP_ENDED) -> list[str]:
    """Remove the directories of owners that are gone, but for the newest ``keep``.

    Returns the removed paths. Only this user's directories are looked at.
    """
    root = parent or tempfile.gettempdir()
    found: list[tuple[float, str]] = []
    with contextlib.suppress(OSError), os.scandir(root) as entries:
        for entry in entries:
            if not entry.name.startswith(PREFIX):
                continue
            with contextlib.suppress(OSError):
                if not entry.is_dir(follow_symlinks=False):
                    continue
                stat = entry.stat(follow_symlinks=False)
                if stat.st_uid == os.getuid():
                    found.append((stat.st_mtime, entry.path))
    removed: list[str] = []
    kept = 0
    for _mtime, path in sorted(found, reverse=True):  # newest first
        fd = _lock_if_abandoned(path)
        if fd is None:
            continue
        try:
            if kept < keep:
                kept += 1
            else:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        finally:
            os.close(fd)
    return removed


def _lock_if_abandoned(path: str) -> int | None:
    """The fd of ``path``'s lock, taken, if no process holds it; else None."""
    try:
        fd = os.open(os.path.join(path, LOCK_NAME), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None  # no lock file: an older version's, or being removed right now
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd
