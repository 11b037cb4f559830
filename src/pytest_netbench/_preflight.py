"""Checks of this machine's limits made before a load opens its first socket.

A load that cannot hold the connections it asks for should fail at once with what to
change, not after a minute of refused connects.
"""

from __future__ import annotations

import resource

from pytest_netbench._errors import ResourceLimitError

# Descriptors the interpreter, its logs and the server's pipes need beside the sockets.
_FD_HEADROOM = 64


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
