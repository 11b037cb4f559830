"""Generator cost and throughput: netbench vs wrk against the same fast C server.

Both generators run one process with one thread and 50 keep-alive connections; the server
(``servers/httpd.c``, epoll, single thread; or ``--server go``, net/http with GOMAXPROCS=1)
is pinned to one core and the generator to the
other. Each trial runs wrk and netbench back to back (order alternating) and prints ratios
measured in that trial; the summary gives median and spread over trials.

    python benchmarks/bench_vs_wrk.py [--trials 3] [--duration 5] [--other-loops] [--bare]
                                      [--server c|go] [--gc-off] [--swap-cpus]

``--bare`` adds to every trial a minimal uvloop + httptools client (servers/bare_client.py):
the floor for any Python generator, so the engine's own overhead shows apart from Python's.

CPU per completed request: wrk's whole process (wait4 rusage) against the CPU netbench spent
inside ``http_load`` (set-up, connects, run and teardown; interpreter start-up is shown apart).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from bare_client import run_bare
from figures import header, row
from generator import GeneratorRun, run_pinned
from launch import PinnedServer, cpus_for_pinning
from wrk_runner import WrkRun, run_wrk

CONNECTIONS = 50


def netbench_once(
    url: str, cpu: int, duration: float, loop: str = "auto", gc_off: bool = False
) -> GeneratorRun:
    extra = {"gc_off": True} if gc_off else {}
    run = run_pinned(cpu, url, connections=CONNECTIONS, duration=duration, loop=loop, **extra)
    r = run.result
    if r.errors_total or not r.ok:
        sys.exit(f"netbench run had errors: {dict(r.errors)} {dict(r.error_samples)}")
    return run


def describe(label: str, wrk: WrkRun, nb: GeneratorRun) -> str:
    r = nb.result
    nb_cpu_us = nb.call_cpu_s / r.ok * 1e6
    return (
        f"  {label}: wrk {wrk.rps:,.0f} req/s {wrk.cpu_us_per_request:.2f} us/req | "
        f"netbench[{r.generator.loop}] {r.rps:,.0f} req/s {nb_cpu_us:.2f} us/req "
        f"(engine window {r.generator.cpu_s / r.ok * 1e6:.2f}, whole process "
        f"{nb.process_cpu_s / r.ok * 1e6:.2f}) -> cpu x{nb_cpu_us / wrk.cpu_us_per_request:.3f}"
        f" rps x{r.rps / wrk.rps:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument(
        "--other-loops", action="store_true", help="also one run each on asyncio and trio"
    )
    parser.add_argument(
        "--bare", action="store_true", help="also a minimal uvloop client in every trial"
    )
    parser.add_argument("--server", choices=["c", "go"], default="c")
    parser.add_argument(
        "--gc-off", action="store_true", help="netbench with Python's cyclic GC disabled"
    )
    parser.add_argument(
        "--swap-cpus", action="store_true", help="server and generator change cores"
    )
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    if args.swap_cpus:
        server_cpu, gen_cpu = gen_cpu, server_cpu
    cpu_ratio, rps_ratio, wrk_us, nb_us, wrk_rps, nb_rps, window_us = ([] for _ in range(7))
    bare_us: list[float] = []
    bare_vs_wrk: list[float] = []
    nb_vs_bare: list[float] = []
    print(
        header(
            "netbench vs wrk, 50 keep-alive connections, 1 thread each",
            f"{'C epoll' if args.server == 'c' else 'Go net/http'} server on cpu {server_cpu}, "
            f"generator on cpu {gen_cpu}, "
            f"{args.duration:g} s per run, {args.trials} trials",
        )
    )
    with PinnedServer("hello", cpu=server_cpu, server=args.server) as server:
        run_wrk(server.url, cpu=gen_cpu, connections=CONNECTIONS, duration_s=1)  # warm caches
        for trial in range(args.trials):
            wrk_first = trial % 2 == 0
            if wrk_first:
                wrk = run_wrk(
                    server.url, cpu=gen_cpu, connections=CONNECTIONS, duration_s=args.duration
                )
            nb = netbench_once(server.url, gen_cpu, args.duration, gc_off=args.gc_off)
            if not wrk_first:
                wrk = run_wrk(
                    server.url, cpu=gen_cpu, connections=CONNECTIONS, duration_s=args.duration
                )
            print(describe(f"trial {trial + 1}", wrk, nb))
            r = nb.result
            nb_cpu = nb.call_cpu_s / r.ok * 1e6
            cpu_ratio.append(nb_cpu / wrk.cpu_us_per_request)
            rps_ratio.append(r.rps / wrk.rps)
            wrk_us.append(wrk.cpu_us_per_request)
            nb_us.append(nb_cpu)
            window_us.append(r.generator.cpu_s / r.ok * 1e6)
            wrk_rps.append(wrk.rps)
            nb_rps.append(r.rps)
            if args.bare:
                bare = run_bare(gen_cpu, server.port, CONNECTIONS, args.duration)
                us = bare["cpu_s"] / bare["ok"] * 1e6
                print(
                    f"  trial {trial + 1}: bare uvloop client {bare['ok'] / bare['elapsed_s']:,.0f}"
                    f" req/s {us:.2f} us/req"
                )
                bare_us.append(us)
                bare_vs_wrk.append(us / wrk.cpu_us_per_request)
                nb_vs_bare.append(nb_cpu / us)
        if args.other_loops:
            for loop in ("asyncio", "trio"):
                nb = netbench_once(server.url, gen_cpu, args.duration, loop=loop)
                wrk = run_wrk(
                    server.url, cpu=gen_cpu, connections=CONNECTIONS, duration_s=args.duration
                )
                print(describe(f"loop={loop}", wrk, nb))
    print(row("wrk CPU per request", wrk_us, "us"))
    print(row("netbench CPU per request (http_load call)", nb_us, "us"))
    print(row("netbench CPU per request (engine window)", window_us, "us"))
    print(row("CPU per request, netbench / wrk", cpu_ratio, "x   (goal <= 1.0, issue 19)"))
    if bare_us:
        print(row("bare uvloop client CPU per request", bare_us, "us"))
        print(row("CPU per request, bare client / wrk", bare_vs_wrk, "x"))
        print(row("CPU per request, netbench / bare client", nb_vs_bare, "x"))
    print(row("wrk throughput", wrk_rps, "req/s"))
    print(row("netbench throughput", nb_rps, "req/s"))
    print(row("throughput, netbench / wrk", rps_ratio, "x   (goal >= 0.9)"))


if __name__ == "__main__":
    main()
