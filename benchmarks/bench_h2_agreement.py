"""Does netbench's HTTP/2 load agree with h2load on every HTTP/2 catalog server? (issue 22)

Each catalog server that speaks HTTP/2 (Go net/http, Node.js ``http2``, hypercorn, nginx),
over cleartext (``app="h2c"``, prior knowledge) and TLS (``app="h2"``, ALPN), is started
by name and pinned to one core; ``crosscheck(url, tool="h2load")`` then measures the same
load (C connections x M streams, D seconds) with netbench and with h2load, one after the
other, both pinned to the other core (this process pins itself there, and h2load, its
child, inherits the pin), after a second of load that primes the server (Node.js's JIT
would otherwise warm up during netbench's load, which runs first, and favour h2load's).
Printed per server: both tools' req/s, their ratio, and whether netbench called its
result valid; then the two rankings by req/s.

Issue 22's bar: within 15 % on req/s, both valid, the same ranking.

    python benchmarks/bench_h2_agreement.py [--trials 3] [--duration 3]
                                            [--connections 10] [--streams 10]
                                            [--servers go,node,hypercorn,nginx]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from launch import cpus_for_pinning, need_tool

from pytest_netbench import Server, catalog, crosscheck, http_load

APPS = ("h2c", "h2")
BAR = 0.15  # issue 22: within 15 % of h2load's req/s


def measure(
    name: str, app: str, cpus: tuple[int, int], args: argparse.Namespace
) -> tuple[float, float, bool]:
    """(netbench req/s, h2load req/s, netbench valid) for one server, one trial."""
    server_cpu, generator_cpu = cpus
    everywhere = os.sched_getaffinity(0)
    with Server.from_spec(catalog.get(name, app=app), cpus=[server_cpu]) as server:
        os.sched_setaffinity(0, {generator_cpu})  # netbench, and h2load (its child), alike
        try:
            # Primed first: crosscheck runs netbench before h2load, so a JIT (Node.js)
            # would otherwise warm up during netbench's load and favour h2load's.
            http_load(
                server.url,
                protocol="h2",
                connections=args.connections,
                streams=args.streams,
                duration=1,
                verify_tls=False,
            )
            checked = crosscheck(
                server.url,
                tool="h2load",
                connections=args.connections,
                streams=args.streams,
                duration=args.duration,
                verify_tls=False,
                retries=0,
            )
        finally:
            os.sched_setaffinity(0, everywhere)
    return checked.netbench.rps, checked.other_value("rps"), checked.valid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=int, default=3, help="whole seconds per load")
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--servers", default="go,node,hypercorn,nginx")
    args = parser.parse_args()
    need_tool("h2load", "apt-get install nghttp2-client")
    server_cpu, generator_cpu = cpus_for_pinning()
    names = [n.strip() for n in args.servers.split(",") if n.strip()]
    print(
        f"\n== netbench vs h2load on each HTTP/2 catalog server: {args.connections} connections"
        f" x {args.streams} streams, {args.duration} s a load, {args.trials} trials"
        f"\n   server on cpu {server_cpu}, netbench and h2load on cpu {generator_cpu};"
        " figures: median [min .. max] over trials",
        flush=True,
    )
    rows: list[tuple[str, float, float]] = []
    print(f"  {'server':<16} {'netbench req/s':>16} {'h2load req/s':>14} {'ratio':>22}  valid")
    for name in names:
        for app in APPS:
            ours: list[float] = []
            theirs: list[float] = []
            valid: list[bool] = []
            for _ in range(args.trials):
                rps, other, ok = measure(name, app, (server_cpu, generator_cpu), args)
                ours.append(rps)
                theirs.append(other)
                valid.append(ok)
            ratios = [a / b for a, b in zip(ours, theirs, strict=True) if b > 0]
            label = f"{name} {app}"
            spread = f"{statistics.median(ratios):.3f} [{min(ratios):.3f} .. {max(ratios):.3f}]"
            mark = "yes" if all(valid) else f"{sum(valid)} of {len(valid)}"
            mine, other = statistics.median(ours), statistics.median(theirs)
            print(
                f"  {label:<16} {mine:>16,.0f} {other:>14,.0f} {spread:>22}  {mark}",
                flush=True,
            )
            rows.append((label, mine, other))
    ours_rank = [label for label, _, _ in sorted(rows, key=lambda r: -r[1])]
    theirs_rank = [label for label, _, _ in sorted(rows, key=lambda r: -r[2])]
    print(f"\n  ranking by netbench: {', '.join(ours_rank)}")
    print(f"  ranking by h2load:   {', '.join(theirs_rank)}")
    within = sum(1 for _, a, b in rows if b > 0 and abs(a / b - 1) <= BAR)
    print(f"  within {BAR:.0%} of h2load (medians): {within} of {len(rows)}")
    print(f"  same ranking: {'yes' if ours_rank == theirs_rank else 'no'}")
    # Two servers h2load itself puts within the bar of each other are a tie: their order
    # is noise. A pair the tools order differently, h2load by more than that, is not.
    crossed = [
        f"{a} / {b}"
        for i, (a, mine_a, other_a) in enumerate(rows)
        for b, mine_b, other_b in rows[i + 1 :]
        if (mine_a - mine_b) * (other_a - other_b) < 0
        and max(other_a, other_b) > (1 + BAR) * min(other_a, other_b)
    ]
    print(f"  pairs ordered differently, {BAR:.0%} or more apart by h2load: {crossed or 'none'}")


if __name__ == "__main__":
    main()
