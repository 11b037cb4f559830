"""Memory of the generator per open connection: RSS with 10,000 idle keep-alive connections.

netbench holds the connections through its own pool: an open-loop run at 1 req/s with
``connections=10000`` opens the whole pool up front and keeps it while almost nothing is
sent. A thread in the generator process samples RSS and open fds every 50 ms; the figure is
the RSS when the most fds were open. The per-connection cost is the difference from the same
run with 100 connections, divided by the 9,900 extra connections, so the interpreter, the
loop and the histograms do not count. Goal: at most 10 KiB per connection.

    python benchmarks/bench_idle_rss.py [--trials 3] [--connections 10000] [--duration 5]
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from generator import run_pinned
from launch import PinnedServer, cpus_for_pinning

BASE_CONNECTIONS = 100
KIB = 1024


def hold(url: str, cpu: int, connections: int, duration: float) -> tuple[dict[str, int], Any]:
    run = run_pinned(
        cpu,
        url,
        rate=1.0,
        connections=connections,
        max_connections=connections,
        duration=duration,
        connect_timeout=30.0,
        sample_rss=True,
        nofile=connections + 1000,
    )
    return run.memory, run.result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--duration", type=float, default=5.0)
    args = parser.parse_args()
    needed = args.connections + 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < needed:
        sys.exit(f"need an fd limit of {needed} (ulimit -Hn is {hard}): raise it and rerun")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))  # children inherit
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            f"generator RSS with {args.connections:,} idle keep-alive connections",
            f"marginal over a {BASE_CONNECTIONS}-connection run; {args.duration:g} s per run",
        )
    )
    per_conn, totals, peak_fds = [], [], []
    extra = args.connections - BASE_CONNECTIONS
    with PinnedServer("hello", cpu=server_cpu) as server:
        for trial in range(args.trials):
            base, _ = hold(server.url, gen_cpu, BASE_CONNECTIONS, args.duration)
            big, result = hold(server.url, gen_cpu, args.connections, args.duration)
            opened = big["peak_fds"] - base["peak_fds"]
            kib = (big["rss_at_peak_fds"] - base["rss_at_peak_fds"]) / KIB / extra
            print(
                f"  trial {trial + 1}: RSS {base['rss_at_peak_fds'] / KIB**2:.1f} MiB at "
                f"{base['peak_fds']} fds, {big['rss_at_peak_fds'] / KIB**2:.1f} MiB at "
                f"{big['peak_fds']} fds (before the run {big['baseline_rss'] / KIB**2:.1f} MiB)"
                f" -> {kib:.2f} KiB per connection; errors {dict(result.errors)}, "
                f"peak pool {result.generator.connections_peak}"
            )
            if opened < extra * 0.99:
                print(f"  warning: only {opened} of {extra} extra connections were open at once")
            per_conn.append(kib)
            totals.append(big["rss_at_peak_fds"] / KIB**2)
            peak_fds.append(big["peak_fds"])
    print(row("generator RSS per idle connection", per_conn, "KiB  (goal <= 10)"))
    print(row(f"generator RSS with {args.connections:,} connections", totals, "MiB"))
    print(row("open fds at the peak", peak_fds))


if __name__ == "__main__":
    main()
