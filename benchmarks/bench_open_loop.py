"""Open loop: does netbench keep a fixed arrival rate, and does it correct for coordinated
omission the way the arithmetic says it should?

Part 1, rate: 10,000 req/s for 10 s at the fast C server; achieved send rate and completed
rate against the target (goal: within 1 %), and the send lag.

Part 2, coordinated omission: 1,000 req/s at a server that, once a second, holds every
response arriving in the next 200 ms until that window ends (``httpd --mode stall``). A
request arriving x ms into a stall waits 200 - x ms, so 20 % of requests wait a time spread
evenly over 0..200 ms and the rest almost nothing: the corrected p90 is 100 ms (the middle of
the stalled fifth) and p99 is 190 ms. Uncorrected figures (from the actual send) are shown
beside them. Each run starts 300 ms into a period (the server counts periods on
CLOCK_MONOTONIC), so it covers whole periods and does not end inside a stall, whose held
requests would be in flight at the deadline (the engine drains them by default; one run
each ending inside a stall, with and without ``drain``, shows the difference).
Run with the default pool (10 connections, allowed to grow to 1,024) and with a fixed
pool of 10, where requests queue inside the generator during a stall: the corrected
figures should hold in both. The default pool grows only as far as the median response
time says the rate needs, and the median here is the fast answers', so it stays near 10
and its uncorrected figures collapse as the fixed pool's do (a run that begins inside a
stall, with no answer yet to judge by, grows it).

    python benchmarks/bench_open_loop.py [--trials 3] [--rate-duration 10] [--co-duration 5]
    python benchmarks/bench_open_loop.py --sweep 5000,10000,20000,40000   # one worker's capacity
    python benchmarks/bench_open_loop.py --sweep 1000,3000,5000 --loop trio
    python benchmarks/bench_open_loop.py --sweep 20000,30000,40000,50000 --server go
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from generator import run_pinned
from launch import PinnedServer, cpus_for_pinning

TARGET_RATE = 10_000.0
CO_RATE = 1_000.0
STALL_MS, PERIOD_MS = 200.0, 1000.0
EXPECTED_P90_MS = STALL_MS * 0.5  # the stalled fifth holds 20 %; p90 is its median
EXPECTED_P99_MS = STALL_MS * 0.95  # p99 is the top 5 % of the stalled fifth
# Start (and so, with whole-second runs, end) 300 ms into a period, clear of the stall:
# a run that ends inside a stall leaves the held requests in flight, uncounted.
ALIGN_PHASE_S = 0.3
END_IN_STALL_PHASE_S = 0.1  # start, and so end, 100 ms into a stall


def rate_part(server_cpu: int, gen_cpu: int, trials: int, duration: float) -> None:
    print(
        header(
            f"open loop at {TARGET_RATE:,.0f} req/s for {duration:g} s",
            f"uniform arrivals, 10 connections ready, pool up to 1,024; "
            f"C server on cpu {server_cpu}, generator on cpu {gen_cpu}",
        )
    )
    sent_ratio, ok_ratio, lag_p99, cpu_pct, p50, u50 = ([] for _ in range(6))
    with PinnedServer("hello", cpu=server_cpu) as server:
        for trial in range(trials):
            r = run_pinned(
                gen_cpu, server.url, rate=TARGET_RATE, duration=duration, connections=10
            ).result
            g = r.generator
            achieved = g.achieved_rate or 0.0
            completed = r.ok / r.duration_s
            print(
                f"  trial {trial + 1}: sent {achieved:,.1f} req/s ({achieved / TARGET_RATE:.4f}x), "
                f"completed {completed:,.1f} req/s ({completed / TARGET_RATE:.4f}x), "
                f"errors {r.errors_total}, in flight {r.in_flight}, unsent {g.unsent}, "
                f"send lag p99 {g.send_lag_p99_ms:.2f} ms max {g.send_lag_max_ms:.2f} ms, "
                f"peak connections {g.connections_peak}, generator cpu {g.cpu_percent:.0f} %, "
                f"latency p50/p99 corrected {r.p50_ms:.2f}/{r.p99_ms:.2f} ms, uncorrected "
                f"{r.uncorrected.p50_ms:.2f}/{r.uncorrected.p99_ms:.2f} ms, "
                f"valid {r.valid} {list(r.invalid_reasons)}"
            )
            sent_ratio.append(achieved / TARGET_RATE)
            ok_ratio.append(completed / TARGET_RATE)
            lag_p99.append(g.send_lag_p99_ms or 0.0)
            cpu_pct.append(g.cpu_percent)
            p50.append(r.p50_ms)
            u50.append(r.uncorrected.p50_ms)
    print(row("achieved send rate / target", sent_ratio, "x  (goal 0.99 .. 1.01)", digits=4))
    print(row("completed rate / target", ok_ratio, "x", digits=4))
    print(row("corrected p50", p50, "ms"))
    print(row("uncorrected p50", u50, "ms"))
    print(row("send lag p99", lag_p99, "ms"))
    print(row("generator CPU", cpu_pct, "%"))


def sweep_part(
    server_cpu: int, gen_cpu: int, rates: list[float], duration: float, loop: str, server: str
) -> None:
    """One run per rate: how far one worker's open loop goes before it saturates."""
    print(
        header(
            f"open-loop capacity of one worker ({loop} loop)",
            f"{duration:g} s per rate after 0.5 s of warm-up, one run each; {server.upper()}"
            f" server on cpu {server_cpu}, generator on cpu {gen_cpu}",
        )
    )
    with PinnedServer("hello", cpu=server_cpu, server=server) as pinned:
        for rate in rates:
            r = run_pinned(
                gen_cpu,
                pinned.url,
                rate=rate,
                duration=duration,
                warmup=0.5,
                connections=10,
                loop=loop,
            ).result
            g = r.generator
            print(
                f"  {rate:>9,.0f} req/s: achieved {(g.achieved_rate or 0.0) / rate:.4f}x, "
                f"generator cpu {g.cpu_percent:.0f} % (busy {g.busy_percent:.0f} %), "
                f"send lag p99 {g.send_lag_p99_ms:.3f} ms, corrected p50 {r.p50_ms:.3f} ms, "
                f"uncorrected p50 {r.uncorrected.p50_ms:.3f} ms, valid {r.valid}"
            )


def co_part(server_cpu: int, gen_cpu: int, trials: int, duration: float) -> None:
    print(
        header(
            f"coordinated omission: {CO_RATE:,.0f} req/s, {STALL_MS:g} ms stall every "
            f"{PERIOD_MS:g} ms, {duration:g} s per run",
            f"expected corrected p90 {EXPECTED_P90_MS:g} ms, p99 {EXPECTED_P99_MS:g} ms (+-10 %)",
        )
    )
    # label -> (pool bound, start phase in the period, extra options, trials)
    setups: dict[str, tuple[int | None, float, dict[str, bool], int]] = {
        "default pool (10, may grow)": (None, ALIGN_PHASE_S, {}, trials),
        "fixed pool of 10": (10, ALIGN_PHASE_S, {}, trials),
        # Ending inside a stall: with drain (the default) the held answers are awaited after
        # the window; with drain=False they are dropped, as wrk2 does. One run each.
        "ends in a stall, drain on": (None, END_IN_STALL_PHASE_S, {}, 1),
        "ends in a stall, drain=False": (None, END_IN_STALL_PHASE_S, {"drain": False}, 1),
    }
    with PinnedServer("stall", cpu=server_cpu, stall_ms=STALL_MS, period_ms=PERIOD_MS) as server:
        for label, (bound, phase, extra, runs) in setups.items():
            p90, p99, u90, u99, r90, r99 = ([] for _ in range(6))
            for trial in range(runs):
                r = run_pinned(
                    gen_cpu,
                    server.url,
                    rate=CO_RATE,
                    duration=duration,
                    connections=10,
                    max_connections=bound,
                    align=[PERIOD_MS / 1000, phase],
                    **extra,
                ).result
                unc = r.uncorrected
                print(
                    f"  {label}, trial {trial + 1}: corrected p50 {r.p50_ms:.1f} p90 "
                    f"{r.p90_ms:.1f} p99 {r.p99_ms:.1f} max {r.max_ms:.1f} ms | uncorrected p90 "
                    f"{unc.p90_ms:.1f} p99 {unc.p99_ms:.1f} max {unc.max_ms:.1f} ms | ok {r.ok} "
                    f"errors {r.errors_total} in flight {r.in_flight} peak connections "
                    f"{r.generator.connections_peak} late sends {r.generator.late_sends}"
                )
                p90.append(r.p90_ms)
                p99.append(r.p99_ms)
                u90.append(unc.p90_ms)
                u99.append(unc.p99_ms)
                r90.append(r.p90_ms / EXPECTED_P90_MS)
                r99.append(r.p99_ms / EXPECTED_P99_MS)
            print(row(f"{label}: corrected p90", p90, "ms"))
            print(row(f"{label}: corrected p99", p99, "ms"))
            print(row(f"{label}: corrected p90 / 100 ms", r90, "x  (goal 0.9 .. 1.1)"))
            print(row(f"{label}: corrected p99 / 190 ms", r99, "x  (goal 0.9 .. 1.1)"))
            print(row(f"{label}: uncorrected p90", u90, "ms"))
            print(row(f"{label}: uncorrected p99", u99, "ms"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--rate-duration", type=float, default=10.0)
    parser.add_argument(
        "--co-duration", type=float, default=5.0, help="whole seconds keep the stall share exact"
    )
    parser.add_argument("--only", choices=["rate", "co"], help="run one part only")
    parser.add_argument(
        "--sweep",
        metavar="RATES",
        help="instead: one 3 s run per rate (comma-separated) to find one worker's capacity",
    )
    parser.add_argument(
        "--loop", default="auto", choices=["auto", "uvloop", "asyncio", "trio"], help="for --sweep"
    )
    parser.add_argument(
        "--server", default="c", choices=["c", "go"], help="for --sweep: C or Go (GOMAXPROCS=1)"
    )
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    if args.sweep:
        try:
            rates = [float(x) for x in args.sweep.split(",")]
        except ValueError:
            parser.error(f"--sweep takes rates like 5000,10000,20000; got {args.sweep!r}")
        sweep_part(server_cpu, gen_cpu, rates, 3.0, args.loop, args.server)
        return
    if args.only != "co":
        rate_part(server_cpu, gen_cpu, args.trials, args.rate_duration)
    if args.only != "rate":
        co_part(server_cpu, gen_cpu, args.trials, args.co_duration)


if __name__ == "__main__":
    main()
