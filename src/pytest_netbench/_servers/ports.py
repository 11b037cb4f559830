"""Ports for servers under test, without the find-a-free-port-release-and-hope race.

Two race-free ways exist. The best is to let the server bind port 0 and report what the
kernel gave it (the launcher's ``port_pattern``). For servers that need a number up front,
:func:`reserve_port` picks one *outside* the kernel's ephemeral range (so no outgoing
connection or port-0 bind can be handed it) and holds a cross-process file lock on it
until the server stops, so two launchers (threads, xdist workers, separate pytest runs)
never pick the same one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import socket
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psutil

from pytest_netbench._errors import PortInUseError, SpecError
from pytest_netbench._servers.sock_diag import TCP_LISTEN, port_sockets, socket_holders

if TYPE_CHECKING:  # filelock is a managed server's, imported as a port is reserved (issue 35)
    import filelock

_EPHEMERAL_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
_DEFAULT_EPHEMERAL = (32768, 60999)
# Below this are well-known and common development ports a reservation should not take.
_LOWEST_RESERVED = 20000
_HIGHEST_PORT = 65535
_ATTEMPTS = 200


@dataclass(slots=True)
class PortReservation:
    """A port held for one server; :meth:`release` when the server has stopped."""

    port: int
    lock: filelock.BaseFileLock | None = field(default=None, repr=False)

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release(force=True)
            self.lock = None


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for automatically assigned local ports (inclusive)."""
    try:
        with open(_EPHEMERAL_RANGE_FILE) as f:
            low, high = (int(part) for part in f.read().split())
    except (OSError, ValueError):
        return _DEFAULT_EPHEMERAL
    return low, high


def reservable_ports() -> list[int]:
    """Candidate ports for reservation: not well-known, not ephemeral."""
    low, high = ephemeral_range()
    candidates = [p for p in range(_LOWEST_RESERVED, _HIGHEST_PORT + 1) if not low <= p <= high]
    if len(candidates) < _ATTEMPTS:
        # The ephemeral range covers (nearly) everything: reserve inside it anyway. The
        # lock still keeps launchers apart; only the kernel could hand the port to an
        # outgoing connection between our check and the server's bind. port_pattern
        # avoids even that.
        candidates = list(range(_LOWEST_RESERVED, _HIGHEST_PORT + 1))
    return candidates


def _lock_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), "pytest-netbench-ports")
    os.makedirs(path, exist_ok=True)
    return path


def _try_lock(port: int) -> filelock.BaseFileLock | None:
    import filelock

    # thread_local=False: a server may be started in one thread and stopped in another.
    lock = filelock.FileLock(os.path.join(_lock_dir(), f"{port}.lock"), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        return None
    return lock


def reserve_port(host: str) -> PortReservation:
    """A port nobody listens on, locked against every other netbench launcher."""
    candidates = reservable_ports()
    rng = random.Random()
    for _ in range(_ATTEMPTS):
        port = rng.choice(candidates)
        lock = _try_lock(port)
        if lock is None:
            continue
        if _can_bind_or_release(host, port, lock):
            return PortReservation(port, lock)
    raise PortInUseError(
        f"no free port found on {host} after {_ATTEMPTS} tries outside the ephemeral range; "
        "let the server bind port 0 and report it (port_pattern=...)"
    )


def claim_port(host: str, port: int) -> PortReservation:
    """Take a port the user chose; an error names whoever already has it."""
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= _HIGHEST_PORT:
        raise SpecError(f"port must be an integer between 1 and {_HIGHEST_PORT}, got {port!r}")
    lock = _try_lock(port)
    if lock is None:
        raise PortInUseError(
            f"port {port} is reserved by another netbench server still running "
            f"(lock {os.path.join(_lock_dir(), f'{port}.lock')}); stop it, or pass port=None "
            "so a free port is chosen"
        )
    if not _can_bind_or_release(host, port, lock):
        raise PortInUseError(
            f"port {port} on {host} is already in use by {describe_listener(port)}; "
            "stop that process, or pass port=None so a free port is chosen"
        )
    return PortReservation(port, lock)


def _can_bind_or_release(host: str, port: int, lock: filelock.BaseFileLock) -> bool:
    """Whether the port is free; if not (or the check fails), the lock is released."""
    try:
        free = _can_bind(host, port)
    except BaseException:
        lock.release(force=True)
        raise
    if not free:
        lock.release(force=True)
    return free


def _can_bind(host: str, port: int) -> bool:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise SpecError(f"cannot resolve server host {host!r}: {exc}") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # Servers set SO_REUSEADDR, so a TIME_WAIT left by an earlier run is not a conflict.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            if exc.errno == errno.EADDRNOTAVAIL:
                raise SpecError(
                    f"server host {host!r} is not an address of this machine: {exc}"
                ) from None
            raise
    return True


def listening_inodes(port: int) -> set[int] | None:
    """The inodes of the TCP sockets listening on ``port`` (any address), asked of the
    kernel (``sock_diag``); None where it cannot answer (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError, ValueError, struct.error):
        return {inode for _, inode in port_sockets(port, frozenset((TCP_LISTEN,)))}
    return None


def listener_pids(port: int) -> set[int]:
    """Pids of processes with a TCP socket listening on ``port`` (any address)."""
    inodes = listening_inodes(port)
    if inodes is not None:
        return socket_holders(inodes) if inodes else set()
    pids: set[int] = set()
    with contextlib.suppress(psutil.Error, OSError):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status != psutil.CONN_LISTEN or not conn.laddr or conn.pid is None:
                continue
            if conn.laddr.port == port:
                pids.add(conn.pid)
    return pids


def describe_listener(port: int) -> str:
    """``pid 123 (nginx: nginx -g daemon off;)`` for whoever listens on ``port``."""
    pids = listener_pids(port)
    if not pids:
        return "another process (not visible to this user)"
    return ", ".join(describe_process(pid) for pid in sorted(pids))


def describe_process(pid: int) -> str:
    try:
        proc = psutil.Process(pid)
        name = proc.name()
        cmdline = " ".join(" ".join(proc.cmdline()).split())  # one line, even for -c code
    except psutil.Error:
        return f"pid {pid}"
    if len(cmdline) > 160:
        cmdline = cmdline[:157] + "..."
    return f"pid {pid} ({name}: {cmdline})" if cmdline else f"pid {pid} ({name})"


def listening_addresses(pids: set[int]) -> list[str]:
    """``127.0.0.1:8080``-style addresses the given processes listen on."""
    found: list[str] = []
    with contextlib.suppress(psutil.Error, OSError):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.pid in pids and conn.laddr:
                ip, port = conn.laddr.ip, conn.laddr.port
                found.append(f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}")
    return sorted(set(found))
