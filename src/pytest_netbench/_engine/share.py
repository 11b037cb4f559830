"""How a load is split across worker processes."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_netbench._model import LoadSpec


@dataclass(frozen=True, slots=True)
class WorkerShare:
    """One worker's part of the load; all workers share ``start_at_ns`` (CLOCK_MONOTONIC is
    system-wide on Linux, so the windows line up across processes)."""

    index: int
    workers: int
    connections: int
    max_connections: int
    requests: int | None
    rate: float | None
    start_at_ns: int


def split_load(spec: LoadSpec, start_at_ns: int) -> list[WorkerShare]:
    n = spec.workers
    shares = []
    for i in range(n):
        conns = spec.connections // n + (1 if i < spec.connections % n else 0)
        requests = None
        if spec.requests is not None:
            requests = spec.requests // n + (1 if i < spec.requests % n else 0)
        max_conns = spec.max_connections or max(spec.connections, 1024)
        shares.append(
            WorkerShare(
                index=i,
                workers=n,
                connections=max(conns, 1),
                max_connections=max(max_conns // n, 1),
                requests=requests,
                rate=spec.rate / n if spec.rate is not None else None,
                start_at_ns=start_at_ns,
            )
        )
    return shares
