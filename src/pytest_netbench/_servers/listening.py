"""A server this tool did not start, found by the port it listens on, and sampled as if it
had started it.

``netbench http URL`` against a server someone else started used to measure the clients
only: three WebSocket runs in a row read 19.2k, 17.9k and 30.2k messages a second with
nothing flagged, because nothing sampled the server or what else ran beside it. On this
machine the server is a process like any other: the one whose socket listens on the
target's port. Sampling its process tree gives the server's CPU per request and the host
contention rule (other processes' CPU on the server's cores) as a managed server has them.

A port is served by one process tree: a master that listens and workers that inherited
the socket (gunicorn, nginx). The tree's root is the eldest in the line of listeners
(a listener whose parent does not listen there too). Several unrelated listeners (``SO_REUSEPORT``
servers started apart) have no one root, and none is sampled; nor is a server this user
cannot see (another user's, or behind a container's proxy).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import psutil

from pytest_netbench._errors import ServerCrashed
from pytest_netbench._servers.ports import describe_process, listener_pids, listening_inodes
from pytest_netbench._servers.sampling import ProcessTreeSampler
from pytest_netbench._servers.sock_diag import socket_holders

if TYPE_CHECKING:
    from pytest_netbench._servers.profiling import NoProfile, RunningProfile


class ListeningServer:
    """The process tree listening on ``port``, as ``server=`` takes it (``Monitored``)."""

    def __init__(self, pid: int, port: int) -> None:
        self.pid = pid
        self.port = port
        self.description = describe_process(pid)
        self._created = _create_time(pid)

    def monitor(self, interval: float = 0.1) -> ProcessTreeSampler:
        return ProcessTreeSampler(self.pid, interval, port=self.port)

    def profiler(self) -> RunningProfile | NoProfile:
        """A profile of the tree, started now (``http_load(..., profile=True)``)."""
        from pytest_netbench._servers.profiling import start_profile

        return start_profile(self.pid)

    def check_alive(self) -> None:
        """Raise :class:`ServerCrashed` when the process is gone (or its pid was reused)."""
        if _create_time(self.pid) != self._created:
            raise ServerCrashed(
                f"the server listening on port {self.port} ({self.description}) is gone"
            )

    def __repr__(self) -> str:
        return f"<ListeningServer port={self.port} {self.description}>"


def find_listening_server(port: int) -> ListeningServer | None:
    """The server listening on ``port`` on this machine, or None when none can be told
    (nothing this user can see listens there, it is this process, or several unrelated
    process trees share the port)."""
    inodes = listening_inodes(port)
    # One holder of each listening socket is enough: the others of a shared socket are in
    # the same tree, whose root the walk up from it finds.
    pids = listener_pids(port) if inodes is None else socket_holders(inodes, one_each=True)
    roots = {_listening_root(pid, port, inodes) for pid in pids - {os.getpid()}}
    roots.discard(None)
    if len(roots) != 1:
        return None
    (root,) = roots
    assert root is not None
    if holds_this_process(root):
        return None  # a tree this command runs in (socket activation by init, say)
    return ListeningServer(root, port)


def holds_this_process(pid: int) -> bool:
    """Whether the process tree rooted at ``pid`` holds this process: sampled as the
    server, it would charge the generator's own work to the server."""
    me = os.getpid()
    if pid == me:
        return True
    # It holds this process when it is one of this process's ancestors: a walk up from
    # here reads a few processes, where listing the tree's descendants reads every
    # process of the machine (issue 35).
    try:
        return any(parent.pid == pid for parent in psutil.Process(me).parents())
    except psutil.Error:
        return False


def _listening_root(pid: int, port: int, inodes: set[int] | None) -> int | None:
    """The eldest ancestor of ``pid`` (itself included) in an unbroken line of processes
    listening on ``port``. The system-wide socket table names one holder of a shared
    socket (a gunicorn worker, say), not each, so the line is walked up process by
    process."""
    try:
        proc = psutil.Process(pid)
        while (parent := proc.parent()) is not None and _listens(parent, port, inodes):
            proc = parent
    except psutil.Error:
        return None
    return proc.pid


def _listens(proc: psutil.Process, port: int, inodes: set[int] | None) -> bool:
    """Whether ``proc`` holds a socket listening on ``port`` (one of ``inodes``, the
    kernel's listeners there, when it could say)."""
    if inodes is not None:
        return bool(socket_holders(inodes, [proc.pid]))
    with contextlib.suppress(psutil.Error):
        for conn in proc.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                return True
    return False


def _create_time(pid: int) -> float | None:
    with contextlib.suppress(psutil.Error):
        return psutil.Process(pid).create_time()
    return None
