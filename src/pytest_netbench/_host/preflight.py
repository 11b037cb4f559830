"""Checks of this machine's limits made before a load opens its first socket.

A load that cannot hold the connections it asks for should fail at once with what to
change, not after a minute of refused connects. Where the generator can get round a limit
by itself it does, and says so in the result's ``generator.notes``:

- one process may hold too few files: the load is spread over more worker processes;
- one source address has too few ephemeral ports for the connections to one loopback
  destination: the connections are spread over source addresses 127.0.0.x.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import resource
from pathlib import Path

from pytest_netbench._errors import ResourceLimitError
from pytest_netbench._host.kernel import local_port_count, mem_available_bytes, sysctl_int
from pytest_netbench._model import LoadSpec

# Descriptors the interpreter, its logs and the server's pipes need beside the sockets.
_FD_HEADROOM = 64
# A process that may hold fewer sockets than this is a misconfigured machine, not a reason
# to start dozens of workers.
_MIN_SOCKETS_PER_WORKER = 256
# Of a source address's ephemeral ports, this share is used (TIME_WAIT of earlier runs
# and other programs hold some of them).
_PORT_SHARE = 0.9
# Kernel memory one idle TCP socket needs at least (its struct and smallest buffers).
_SOCKET_FLOOR_BYTES = 10 * 1024


def plan_load(spec: LoadSpec, server_pid: int | None = None) -> tuple[LoadSpec, tuple[str, ...]]:
    """The spec to run on this machine, and notes on what was changed to make it fit;
    :class:`ResourceLimitError` (saying what to change) when it cannot fit."""
    notes: list[str] = []
    spec = _spread_over_workers(spec, notes)
    ensure_fd_budget(-(-spec.pool_limit // spec.workers))
    spec = _spread_over_sources(spec, notes)
    _check_server_files(spec, server_pid)
    _check_memory(spec)
    _note_accept_queue(spec, notes)
    return spec, tuple(notes)


def ensure_fd_budget(connections: int) -> int:
    """Make room for `connections` sockets: raise the soft limit if the hard one allows."""
    need = connections + _FD_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return int(soft)
    if hard != resource.RLIM_INFINITY and hard < need:
        raise ResourceLimitError(
            f"{connections} connections need about {need} file descriptors but the hard limit"
            f" is {hard}: raise it (ulimit -Hn / limits.conf) or use fewer connections or"
            " more workers"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    return need


def _spread_over_workers(spec: LoadSpec, notes: list[str]) -> LoadSpec:
    """More worker processes when one may not hold its share of the connections."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return spec
    per_worker = hard - _FD_HEADROOM
    if -(-spec.pool_limit // spec.workers) <= per_worker:
        return spec
    if per_worker < _MIN_SOCKETS_PER_WORKER:
        return spec  # ensure_fd_budget refuses it, saying how many are needed
    workers = math.ceil(spec.pool_limit / per_worker)
    if spec.requests is not None and spec.requests < workers:
        return spec
    notes.append(
        f"spread over {workers} worker processes: each may hold at most {hard} open files"
        f" (hard RLIMIT_NOFILE), and {spec.pool_limit:,} connections need more"
    )
    return dataclasses.replace(spec, workers=workers)


def _spread_over_sources(spec: LoadSpec, notes: list[str]) -> LoadSpec:
    """Source addresses 127.0.0.x when one address has too few ports for the connections."""
    ports = local_port_count()
    if ports is None or spec.source_addresses:
        return spec
    usable = int(ports * _PORT_SHARE)
    if spec.pool_limit <= usable:
        return spec
    try:
        target = ipaddress.ip_address(spec.proxy[0] if spec.proxy else spec.host)
    except ValueError:
        target = None
    fix = (
        f"widen net.ipv4.ip_local_port_range (now {ports:,} ports:"
        " sysctl -w net.ipv4.ip_local_port_range='1024 65535') or use fewer connections"
    )
    if target is None or target.version != 4 or not target.is_loopback:
        raise ResourceLimitError(
            f"{spec.pool_limit:,} connections to one destination need more ephemeral ports"
            f" than one source address has ({usable:,} usable): {fix}"
        )
    count = math.ceil(spec.pool_limit / usable)
    sources = tuple(f"127.0.0.{i}" for i in range(1, count + 1))
    notes.append(
        f"connections spread over source addresses {sources[0]}..{sources[-1]}: one address"
        f" has {ports:,} ephemeral ports (net.ipv4.ip_local_port_range)"
    )
    return dataclasses.replace(spec, source_addresses=sources)


def _check_server_files(spec: LoadSpec, server_pid: int | None) -> None:
    """A managed server that may not hold a socket for each connection fails them all."""
    if server_pid is None:
        return
    limit = _open_files_limit(server_pid)
    if limit is not None and limit < spec.pool_limit + 16:
        raise ResourceLimitError(
            f"the server under test (pid {server_pid}) may hold at most {limit:,} open files,"
            f" fewer than the {spec.pool_limit:,} connections asked for: start it with a"
            " higher limit (raise this process's soft limit with ulimit -n before starting it,"
            " or LimitNOFILE= in its unit) or use fewer connections"
        )


def _open_files_limit(pid: int) -> int | None:
    try:
        lines = Path(f"/proc/{pid}/limits").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("Max open files"):
            soft = line.split()[3]
            return int(soft) if soft.isdigit() else None
    return None


def _check_memory(spec: LoadSpec) -> None:
    """The kernel memory the sockets need at the least, against what is available."""
    available = mem_available_bytes()
    if available is None:
        return
    # Both ends of a loopback connection live on this host.
    need = spec.pool_limit * 2 * _SOCKET_FLOOR_BYTES
    if need > available:
        raise ResourceLimitError(
            f"{spec.pool_limit:,} connections need at least {need / 2**30:.1f} GiB of kernel"
            f" memory for their sockets, and {available / 2**30:.1f} GiB is available: use"
            " fewer connections or a machine with more memory"
        )


def _note_accept_queue(spec: LoadSpec, notes: list[str]) -> None:
    """A backlog capped by somaxconn overflows when many connects arrive at once."""
    somaxconn = sysctl_int("net.core.somaxconn")
    syn_backlog = sysctl_int("net.ipv4.tcp_max_syn_backlog")
    if somaxconn is None or spec.pool_limit <= somaxconn or spec.connect_first:
        return
    notes.append(
        f"{spec.pool_limit:,} connections may arrive faster than an accept queue of"
        f" net.core.somaxconn={somaxconn} (tcp_max_syn_backlog={syn_backlog}) holds; an"
        " overflow costs a connect a one-second SYN retransmit: connect_first=True opens"
        " them paced, or raise both sysctls"
    )
