"""Load through a Dask cluster against the same load on local worker processes.

Both run the same closed-loop load (2 shares, 40 keep-alive connections) at the same Go
net/http server: once with ``workers=2`` as local processes, once with ``cluster=`` on a
``LocalCluster`` of two worker processes (one thread each) on this machine. Each trial
runs both, order alternating, and prints what going through the cluster costs:

- generator CPU per ok response (the shares' own CPU in their windows),
- time outside the window (the call's wall time minus the window: start-up, release,
  collection),
- how far apart the shares' windows opened (``generator.start_spread_ms``).

    python benchmarks/bench_cluster.py [--trials 3] [--duration 4]

Needs the ``distributed`` extra.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from launch import PinnedServer, cpus_for_pinning

CONNECTIONS = 40


def one(url: str, duration: float, cluster: object | None) -> tuple[float, float, float]:
    """(cpu us per ok response, seconds outside the window, start spread ms or nan)."""
    from pytest_netbench import http_load

    began = time.monotonic()
    r = http_load(url, connections=CONNECTIONS, duration=duration, workers=2, cluster=cluster)
    wall = time.monotonic() - began
    if r.errors_total or not r.ok:
        sys.exit(f"load had errors: {dict(r.errors)} {dict(r.error_samples)}")
    spread = r.generator.start_spread_ms
    return r.generator.cpu_s / r.ok * 1e6, wall - r.duration_s, spread or float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per run")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    server_cpu, _ = cpus_for_pinning()
    print(
        header(
            "2 shares through a Dask LocalCluster vs 2 local worker processes",
            f"Go net/http server on cpu {server_cpu}, {CONNECTIONS} connections,"
            f" {args.duration:g} s per run, {args.trials} trials",
        )
    )
    local_cpu, dask_cpu, ratio, local_out, dask_out, spread = ([] for _ in range(6))
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    try:
        with PinnedServer("hello", cpu=server_cpu, server="go") as server:
            for trial in range(args.trials):
                if trial % 2 == 0:
                    local = one(server.url, args.duration, None)
                    dask = one(server.url, args.duration, client)
                else:
                    dask = one(server.url, args.duration, client)
                    local = one(server.url, args.duration, None)
                local_cpu.append(local[0])
                dask_cpu.append(dask[0])
                ratio.append(dask[0] / local[0])
                local_out.append(local[1])
                dask_out.append(dask[1])
                spread.append(dask[2])
                print(
                    f"  trial {trial + 1}: local {local[0]:.2f} us/resp, {local[1]:.2f} s outside"
                    f" | dask {dask[0]:.2f} us/resp, {dask[1]:.2f} s outside, windows"
                    f" {dask[2]:.2f} ms apart"
                )
    finally:
        client.close()
        cluster.close()
    print(row("local workers: CPU per ok response", local_cpu, "us"))
    print(row("dask workers: CPU per ok response", dask_cpu, "us"))
    print(row("CPU per response, dask / local", ratio, "x"))
    print(row("local workers: time outside the window", local_out, "s"))
    print(row("dask workers: time outside the window", dask_out, "s"))
    print(row("dask: the shares' windows apart", spread, "ms"))


if __name__ == "__main__":
    main()
