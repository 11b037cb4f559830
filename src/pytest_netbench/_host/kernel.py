"""Reading this Linux host's network settings and counters (``/proc``), for the pre-flight
checks and for figures a result carries. Every reader returns None where the file is
missing or unreadable (another OS, a restricted container): a check it feeds is then
skipped, never failed.
"""

from __future__ import annotations

from pathlib import Path

_PROC_SYS = Path("/proc/sys")


def sysctl_ints(name: str) -> tuple[int, ...] | None:
    """A sysctl's integer values by its dotted name (``net.core.somaxconn``)."""
    try:
        text = (_PROC_SYS / name.replace(".", "/")).read_text()
    except OSError:
        return None
    try:
        return tuple(int(v) for v in text.split())
    except ValueError:
        return None


def sysctl_int(name: str) -> int | None:
    values = sysctl_ints(name)
    return values[0] if values else None


def local_port_count() -> int | None:
    """How many ephemeral ports one source address has for one destination."""
    span = sysctl_ints("net.ipv4.ip_local_port_range")
    if span is None or len(span) != 2:
        return None
    return span[1] - span[0] + 1


def tcp_ext_counter(name: str) -> int | None:
    """A ``TcpExt`` counter of ``/proc/net/netstat`` (``ListenOverflows``), system-wide
    (this network namespace's)."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return None
    for header, values in zip(lines[::2], lines[1::2], strict=False):
        if header.startswith("TcpExt:") and values.startswith("TcpExt:"):
            table = dict(zip(header.split()[1:], values.split()[1:], strict=False))
            value = table.get(name)
            return int(value) if value is not None and value.isdigit() else None
    return None


def mem_available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def tcp_socket_counts() -> tuple[int, int] | None:
    """This host's TCP sockets (this network namespace's): (in use, in TIME_WAIT), from
    ``/proc/net/sockstat``, the figures ``netstat`` and ``ss -s`` summarise."""
    try:
        lines = Path("/proc/net/sockstat").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("TCP:"):
            fields = line.split()[1:]
            table = dict(zip(fields[::2], fields[1::2], strict=False))
            try:
                return int(table["inuse"]), int(table["tw"])
            except (KeyError, ValueError):
                return None
    return None
