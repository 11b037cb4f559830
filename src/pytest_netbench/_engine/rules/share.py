"""How a load is split into worker shares, and when a share starts.

A share says when to start *relative to its release* (``start_delay_ns``), not at an
instant of one machine's clock, so it means the same wherever it runs. Whoever runs it
turns that into an instant of the local ``CLOCK_MONOTONIC`` (:meth:`WorkerShare.start_at`):
workers on one host count from the one release instant of the parent (the clock is
system-wide on Linux, so their windows line up), a worker on another host counts from
when the share reached it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_netbench._model import LoadSpec


@dataclass(frozen=True, slots=True)
class WorkerShare:
    """One worker's part of the load."""

    index: int
    workers: int
    connections: int
    max_connections: int
    requests: int | None
    rate: float | None
    start_delay_ns: int

    def start_at(self, released_ns: int) -> int:
        """The start instant on this host's monotonic clock, for a share released at
        ``released_ns`` on that clock."""
        return released_ns + self.start_delay_ns


def split_load(spec: LoadSpec, start_delay_ns: int = 0) -> list[WorkerShare]:
    """Connections, requests, rate and pool bound divided as evenly as they go."""
    n = spec.workers
    shares = []
    for i in range(n):
        conns = spec.connections // n + (1 if i < spec.connections % n else 0)
        requests = None
        if spec.requests is not None:
            requests = spec.requests // n + (1 if i < spec.requests % n else 0)
        shares.append(
            WorkerShare(
                index=i,
                workers=n,
                connections=max(conns, 1),
                max_connections=max(spec.pool_limit // n, 1),
                requests=requests,
                rate=spec.rate / n if spec.rate is not None else None,
                start_delay_ns=start_delay_ns,
            )
        )
    return shares
