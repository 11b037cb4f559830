"""Latency accuracy: p50 of netbench and of wrk against a server that answers in exactly 20 ms.

The delay server (``servers/httpd.c --mode delay``) holds each response for 20 ms on a
timerfd with 1 ns slack, so the true latency is 20 ms plus loopback and scheduling time
(tens of microseconds). Both generators run one thread with 10 keep-alive connections,
pinned to the core the server does not use.

    python benchmarks/bench_latency.py [--trials 3] [--duration 5] [--connections 10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from generator import run_pinned
from launch import PinnedServer, cpus_for_pinning
from wrk_runner import run_wrk

DELAY_MS = 20.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument("--connections", type=int, default=10)
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            f"latency accuracy against a {DELAY_MS:g} ms server",
            f"{args.connections} keep-alive connections, {args.duration:g} s per run, "
            f"server on cpu {server_cpu}, generator on cpu {gen_cpu}",
        )
    )
    nb_p50, wrk_p50, nb_p99, wrk_p99, nb_vs_wrk, nb_vs_true, wrk_vs_true = ([] for _ in range(7))
    with PinnedServer("delay", cpu=server_cpu, delay_ms=DELAY_MS) as server:
        for trial in range(args.trials):
            wrk = run_wrk(
                server.url,
                cpu=gen_cpu,
                connections=args.connections,
                duration_s=args.duration,
                latency=True,
            )
            r = run_pinned(
                gen_cpu, server.url, connections=args.connections, duration=args.duration
            ).result
            if r.errors_total or wrk.errors:
                sys.exit(f"errors: netbench {dict(r.errors)}, wrk {wrk.errors}")
            w50, w99 = wrk.percentiles_ms[50.0], wrk.percentiles_ms[99.0]
            print(
                f"  trial {trial + 1}: p50 netbench {r.p50_ms:.3f} ms, wrk {w50:.2f} ms | "
                f"p99 netbench {r.p99_ms:.3f} ms, wrk {w99:.2f} ms | "
                f"samples netbench {r.ok}, wrk {wrk.requests}"
            )
            nb_p50.append(r.p50_ms)
            wrk_p50.append(w50)
            nb_p99.append(r.p99_ms)
            wrk_p99.append(w99)
            nb_vs_wrk.append(r.p50_ms - w50)
            nb_vs_true.append(r.p50_ms - DELAY_MS)
            wrk_vs_true.append(w50 - DELAY_MS)
    print(row("netbench p50", nb_p50, "ms"))
    print(row("wrk p50 (--latency, 2 decimals)", wrk_p50, "ms"))
    print(row("netbench p99", nb_p99, "ms"))
    print(row("wrk p99", wrk_p99, "ms"))
    print(row("p50 netbench - wrk", nb_vs_wrk, "ms  (goal |x| <= 1)"))
    print(row(f"p50 netbench - {DELAY_MS:g} ms", nb_vs_true, "ms  (goal |x| <= 1)"))
    print(row(f"p50 wrk - {DELAY_MS:g} ms", wrk_vs_true, "ms"))


if __name__ == "__main__":
    main()
