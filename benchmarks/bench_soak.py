"""Soak: a long open-loop load at a steady rate against the Go hello server; the generator's
memory and open fds must stay flat and the timeline's rows steady (issue 34).

A generator that leaks (a list of samples that grows, a connection never closed, a
per-second row that keeps what it should have merged) looks fine for ten seconds and
falls over in a night's run. This runs one load of ``--duration`` seconds (10 minutes by
default) at ``--rate`` requests a second in this process, one worker, while a thread
samples the process's RSS and open fds every second. The server is net/http with
GOMAXPROCS=1 pinned to one core, the generator pinned to the other.

It prints the RSS and fds after the first minute (the pool and the histograms have their
size by then) and their extremes after it, the timeline's rows (ok per second: mean,
stdev, min, max; each row's p99), and FLAT or GROWING: flat when the RSS and the fds after
the first minute stay within ``--tolerance`` (5 %) of their value then.

    python benchmarks/bench_soak.py [--duration 600] [--rate 2000] [--connections 50] [--loop trio]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from launch import PinnedServer, cpus_for_pinning

_PAGE = os.sysconf("SC_PAGE_SIZE")
_MIB = 1024 * 1024


def rss_bytes() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class Sampler(threading.Thread):
    """(seconds since start, RSS, open fds) every ``every`` seconds."""

    def __init__(self, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.every = every
        self.rows: list[tuple[float, int, int]] = []
        self.stopped = threading.Event()
        self.began = time.monotonic()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            self.rows.append((time.monotonic() - self.began, rss_bytes(), open_fds()))


def within(values: list[int], reference: int, tolerance: float) -> bool:
    return all(abs(v - reference) <= tolerance * reference for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600.0)
    parser.add_argument("--rate", type=float, default=2000.0)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--settle", type=float, default=60.0, help="seconds before the reference")
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--loop", default="auto", help="auto, asyncio, uvloop or trio")
    args = parser.parse_args()
    server_cpu, generator_cpu = cpus_for_pinning()
    from pytest_netbench import http_load

    os.sched_setaffinity(0, {generator_cpu})
    with PinnedServer(server="go", cpu=server_cpu) as server:
        sampler = Sampler()
        sampler.start()
        result = http_load(
            server.url,
            rate=args.rate,
            connections=args.connections,
            duration=args.duration,
            loop=args.loop,
        )
        sampler.stopped.set()
        sampler.join()
    settle = min(args.settle, args.duration / 2)
    # From the reference on, up to the window's end (the teardown closes the connections).
    later = [row for row in sampler.rows if settle <= row[0] <= args.duration - 0.5]
    if not later:
        sys.exit("the load ended before the first minute: give a longer --duration")
    _t, rss_ref, fds_ref = later[0]
    rss = [r for _t, r, _f in later]
    fds = [f for _t, _r, f in later]
    rows = result.timeline[1:-1]  # the first and last rows are partial
    ok = [row.ok for row in rows]
    p99 = [row.p99_ms for row in rows if row.p99_ms is not None]
    print(
        f"soak: {args.duration:g} s at {args.rate:g} req/s, {args.connections} connections,"
        f" Go net/http (GOMAXPROCS=1) on core {server_cpu}, netbench ({args.loop} loop) on"
        f" core {generator_cpu}"
    )
    print(
        f"requests: {result.sent:,} sent, {result.ok:,} ok, {result.errors_total:,} errors,"
        f" {result.in_flight} in flight; valid: {result.valid}"
        + ("" if result.valid else f" ({'; '.join(result.invalid_reasons)})")
    )
    print(
        f"RSS after {later[0][0]:.0f} s: {rss_ref / _MIB:.1f} MiB; after it: min"
        f" {min(rss) / _MIB:.1f}, max {max(rss) / _MIB:.1f} MiB"
        f" ({(max(rss) - rss_ref) / rss_ref:+.1%}), last {rss[-1] / _MIB:.1f} MiB"
    )
    print(
        f"open fds after {later[0][0]:.0f} s: {fds_ref}; after it: min {min(fds)}, max"
        f" {max(fds)} (connections: {result.generator.connections_opened:,} opened, peak"
        f" {result.generator.connections_peak:,})"
    )
    if ok:
        print(
            f"timeline: {len(rows)} whole rows, ok/s mean {statistics.fmean(ok):,.1f},"
            f" stdev {statistics.pstdev(ok):,.1f}, min {min(ok):,}, max {max(ok):,}"
        )
    if p99:
        print(
            f"each row's p99: median {statistics.median(p99):.3f} ms, max {max(p99):.3f} ms;"
            f" the whole run's p99 {result.p99_ms:.3f} ms"
        )
    rss_flat = within(rss, rss_ref, args.tolerance)
    fds_flat = within(fds, fds_ref, args.tolerance)
    # An open loop opens a connection for each request due while all are busy: a stall of
    # the generator (a busy machine) grows the pool by design, one fd per connection.
    grown = result.generator.connections_peak - args.connections
    fds_with_pool = max(fds) - fds_ref <= max(grown, 0) + args.tolerance * fds_ref
    if not fds_flat and fds_with_pool:
        print(
            f"the fds grew with the pool only: {grown} connections opened beyond"
            f" {args.connections} while requests waited for one (send lag p99"
            f" {result.generator.send_lag_p99_ms or 0.0:.1f} ms: the generator stalled)"
        )
    flat = rss_flat and fds_with_pool
    print(("FLAT" if flat else "GROWING") + f" (within {args.tolerance:.0%} after {settle:g} s)")


if __name__ == "__main__":
    main()
