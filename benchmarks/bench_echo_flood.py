"""Echo flood: `netbench echo` against a minimal Go flood client, on the same Go echo server.

The server is the catalog's Go echo (a 32 KiB read/write loop per connection, GOMAXPROCS=1)
pinned to one core; each generator runs alone, pinned to the other. Every exchange writes
``--payload-bytes`` in ``--chunk`` writes and reads it back, and both clients check every byte.
Each trial runs the Go client and netbench back to back (order alternating) at each
connection count and prints the ratio of verified exchanges per second measured in that trial.

    python benchmarks/bench_echo_flood.py [--trials 3] [--duration 8] [--connections 100,1000]
                                          [--payload-bytes 524288] [--chunk 32768]

The Go client (``servers/flood_go/``) opens its connections before its window, as netbench
does, and counts exchanges completed inside the window.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from generator import run_pinned
from launch import PinnedServer, build_go_flood, cpus_for_pinning
from measured import run_measured

_FLOOD = re.compile(r"FLOOD exchanges=(\d+) verify_errors=(\d+) io_errors=(\d+) seconds=([\d.]+)")


def go_flood(port: int, cpu: int, connections: int, size: int, chunk: int, seconds: float) -> float:
    """Verified exchanges per second of the Go client; exits on any error it counted."""
    argv = ["taskset", "-c", str(cpu), str(build_go_flood())]
    argv += [f"127.0.0.1:{port}", str(connections), str(size), str(chunk), str(seconds)]
    done = run_measured(argv, timeout_s=seconds + 60)
    found = _FLOOD.search(done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"Go flood client failed (exit {done.returncode}): {done.stderr[-2000:]}")
    exchanges, verify, io_errors, elapsed = found.groups()
    if int(verify) or int(io_errors):
        sys.exit(f"Go flood client saw errors: {done.stdout.strip()}")
    return int(exchanges) / float(elapsed)


def netbench_flood(
    port: int, cpu: int, connections: int, size: int, chunk: int, seconds: float
) -> tuple[float, float]:
    """(verified exchanges per second, generator CPU share) of one netbench worker."""
    run = run_pinned(
        cpu,
        f"tcp://127.0.0.1:{port}",
        connections=connections,
        payload_size=size,
        chunk=chunk,
        duration=seconds,
    )
    r = run.result
    if r.errors_total:
        sys.exit(f"netbench flood had errors: {dict(r.errors)} {dict(r.error_samples)}")
    return r.rps, r.generator.cpu_percent / 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per run")
    parser.add_argument("--connections", default="100,1000", help="comma-separated counts")
    parser.add_argument(
        "--payload-bytes", type=int, default=512 * 1024, help="payload per exchange"
    )
    parser.add_argument("--chunk", type=int, default=32 * 1024, help="write size")
    args = parser.parse_args()
    counts = [int(c) for c in args.connections.split(",")]
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            f"netbench echo vs a Go flood client, {args.payload_bytes:,} bytes in"
            f" {args.chunk:,}-byte writes, every byte checked",
            f"Go echo server (GOMAXPROCS=1) on cpu {server_cpu}, generator on cpu "
            f"{gen_cpu}, {args.duration:g} s per run, {args.trials} trials",
        )
    )
    ratios: dict[int, list[float]] = {c: [] for c in counts}
    go_rates: dict[int, list[float]] = {c: [] for c in counts}
    nb_rates: dict[int, list[float]] = {c: [] for c in counts}
    with PinnedServer(cpu=server_cpu, server="go-echo") as server:
        for trial in range(args.trials):
            for count in counts:
                load = (server.port, gen_cpu, count, args.payload_bytes, args.chunk, args.duration)
                if trial % 2 == 0:
                    go = go_flood(*load)
                    nb, share = netbench_flood(*load)
                else:
                    nb, share = netbench_flood(*load)
                    go = go_flood(*load)
                ratios[count].append(nb / go)
                go_rates[count].append(go)
                nb_rates[count].append(nb)
                print(
                    f"  trial {trial + 1}, {count:,} connections: Go {go:,.0f}/s | netbench "
                    f"{nb:,.0f}/s (worker cpu {share:.0%}) -> x{nb / go:.3f}"
                )
    for count in counts:
        print(row(f"{count:,} connections: Go client", go_rates[count], "exchanges/s"))
        print(row(f"{count:,} connections: netbench", nb_rates[count], "exchanges/s"))
        print(row(f"{count:,} connections: netbench / Go", ratios[count], "x   (goal >= 0.8)"))


if __name__ == "__main__":
    main()
