"""A process's descendants, read from the tree itself.

psutil's ``children(recursive=True)`` reads every process of the machine (its parent's pid
is in each one's stat file): milliseconds on a busy host, each time a sampler re-lists a
server's tree, and twice in a one-request load. Linux keeps each thread's children in
``/proc/PID/task/TID/children`` (CONFIG_PROC_CHILDREN): a few small reads per process of
the tree. Where the kernel keeps no such file, one scan of the process table stands in.
"""

from __future__ import annotations

import contextlib
import os

import psutil


def subtree_pids(root: int, *, leave_out: int | None = None) -> list[int]:
    """``root`` and its descendants (parents before their children), without ``leave_out``
    and its own. A process that ends meanwhile may be left out, or listed though gone."""
    children = _children if has_children_files() else _child_table().get
    found: list[int] = []
    seen: set[int] = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid == leave_out or pid in seen:
            continue
        seen.add(pid)
        found.append(pid)
        todo.extend(children(pid) or ())
    return found


def has_children_files() -> bool:
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


def _children(pid: int) -> list[int]:
    """The children of ``pid``'s threads."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            path = f"/proc/{pid}/task/{tid}/children"
            with contextlib.suppress(OSError, ValueError), open(path, "rb") as f:
                found.extend(int(child) for child in f.read().split())
    return found


def _child_table() -> dict[int, list[int]]:
    """Each process's children, from one scan of the process table."""
    table: dict[int, list[int]] = {}
    for proc in psutil.process_iter(["ppid"]):
        ppid = proc.info.get("ppid")
        if isinstance(ppid, int):
            table.setdefault(ppid, []).append(proc.pid)
    return table
