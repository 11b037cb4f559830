"""Streams of server-sent events: netbench's CPU per event against a minimal Go client.

The catalog's Go server (pinned to one core, GOMAXPROCS=1) streams ``/sse``: EVENTS events
EVERY ms apart after FIRST ms. Each tool (pinned to the other core) holds CONNECTIONS
streams at once for DURATION seconds, one stream after another on each connection:
``netbench sse`` (its own process, start-up included, as a user runs it) and
``servers/sse_go/client.go`` (Go's net/http client, a bufio reader counting ``data:``
lines). The two alternate in rounds (netbench first in odd rounds, Go first in even ones,
so neither always runs on a machine the other just warmed or tired), and the figures are
medians over the rounds: each tool's CPU microseconds per event (its whole process: user
+ system) and the ratio netbench / Go; and, as an independent client's agreement, the Go
client's own first event and gap p50 (time.Now() around its reads) against netbench's, a
round's difference being netbench / Go - 1. It says whether the median first-event
difference is within 5 % (the issue's bar) and in how many rounds it was.

    python benchmarks/bench_sse.py [--rounds 5] [--duration 5] [--connections 500]

Needs Go and taskset. Ratios measured in one run on the same machine; the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from launch import PinnedServer, build_go_sse_client, cpus_for_pinning, need_tool


def run_pinned(command: list[str], cpu: int) -> tuple[str, float]:
    """Run ``command`` on ``cpu``: its stdout and the CPU seconds its process tree spent."""
    taskset = need_tool("taskset", "apt-get install util-linux")
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([taskset, "-c", str(cpu), *command], stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) not in (0, 9):  # 9: thresholds (none here)
            sys.exit(f"{command[0]} failed with status {status}")
        out.seek(0)
        return out.read().decode(), usage.ru_utime + usage.ru_stime


# The bar for an independent client's agreement on the first event.
AGREEMENT = 0.05


def run_netbench(url: str, args: argparse.Namespace, cpu: int) -> dict[str, float]:
    """One ``netbench sse`` run: CPU per event and its first event and gap p50 (ms)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "result.json"
        netbench = [
            sys.executable, "-m", "pytest_netbench.cli", "sse", url, "--quiet",
            "-c", str(args.connections), "-d", f"{args.duration}s", "--json", str(out),
        ]  # fmt: skip
        _, seconds = run_pinned(netbench, cpu)
        result = json.loads(out.read_text())
    stream = result["stream"]
    events = stream["events"]
    print(
        f"  netbench  {events:,} events, {seconds:.2f} s CPU, {seconds / events * 1e6:.1f}"
        f" us/event; valid {result['valid']}; first event p50"
        f" {stream['first_event']['p50_ms']:.2f} p99 {stream['first_event']['p99_ms']:.2f} ms,"
        f" gap p50 {stream['gap']['p50_ms']:.2f} p99 {stream['gap']['p99_ms']:.2f} ms"
    )
    for reason in result["invalid_reasons"]:
        print(f"    invalid: {reason}")
    return {
        "us_per_event": seconds / events * 1e6,
        "first": stream["first_event"]["p50_ms"],
        "gap": stream["gap"]["p50_ms"],
    }


def run_go(go_client: Path, url: str, args: argparse.Namespace, cpu: int) -> dict[str, float]:
    """One Go client run: CPU per event and its own first event and gap p50 (ms)."""
    said, seconds = run_pinned(
        [str(go_client), url, str(args.connections), str(args.duration)], cpu
    )
    words = dict(part.split("=") for part in said.split())
    events = int(words["events"])
    first, gap = float(words["first_event_p50_ms"]), float(words["gap_p50_ms"])
    print(
        f"  go client {events:,} events, {seconds:.2f} s CPU, {seconds / events * 1e6:.1f}"
        f" us/event; first event p50 {first:.2f} ms, gap p50 {gap:.2f} ms"
    )
    return {"us_per_event": seconds / events * 1e6, "first": first, "gap": gap}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of both tools (>= 5)")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=500)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--every", type=int, default=50, help="ms between events")
    parser.add_argument("--first", type=int, default=20, help="ms to the first event")
    args = parser.parse_args()
    if args.rounds < 5:
        parser.error(
            f"--rounds must be >= 5 for a median that one bad round cannot move, got {args.rounds}"
        )
    server_cpu, tool_cpu = cpus_for_pinning()
    go_client = build_go_sse_client()
    rounds: list[dict[str, dict[str, float]]] = []
    with PinnedServer(server="go-catalog", cpu=server_cpu) as server:
        url = f"{server.url}sse?first_ms={args.first}&every_ms={args.every}&events={args.events}"
        print(f"{args.connections} streams at once, {args.duration:g} s, {url}")
        for number in range(1, args.rounds + 1):
            order = ("netbench", "go") if number % 2 else ("go", "netbench")
            print(f"round {number} ({' then '.join(order)}):")
            figures = {
                tool: run_netbench(url, args, tool_cpu)
                if tool == "netbench"
                else run_go(go_client, url, args, tool_cpu)
                for tool in order
            }
            ours, theirs = figures["netbench"], figures["go"]
            cpu_ratio = ours["us_per_event"] / theirs["us_per_event"]
            print(
                f"  netbench / go: CPU per event {cpu_ratio:.2f}x,"
                f" first event {ours['first'] / theirs['first'] - 1:+.1%},"
                f" gap {ours['gap'] / theirs['gap'] - 1:+.1%}"
            )
            rounds.append(figures)
    median = statistics.median

    def per_round(tool: str, name: str) -> list[float]:
        return [r[tool][name] for r in rounds]

    ratios = [r["netbench"]["us_per_event"] / r["go"]["us_per_event"] for r in rounds]
    first = [r["netbench"]["first"] / r["go"]["first"] - 1 for r in rounds]
    gap = [r["netbench"]["gap"] / r["go"]["gap"] - 1 for r in rounds]
    ours_cpu, go_cpu = (
        median(per_round("netbench", "us_per_event")),
        median(per_round("go", "us_per_event")),
    )
    print(
        f"median of {len(rounds)} rounds: CPU per event netbench {ours_cpu:.1f} us, Go client"
        f" {go_cpu:.1f} us; netbench / go {median(ratios):.2f}x (median of the rounds' ratios)"
    )
    within = sum(abs(d) <= AGREEMENT for d in first)
    verdict = "within" if abs(median(first)) <= AGREEMENT else "NOT within"
    print(
        f"first event p50: netbench {median(per_round('netbench', 'first')):.2f} ms, Go client"
        f" {median(per_round('go', 'first')):.2f} ms, difference {median(first):+.1%} (median):"
        f" {verdict} {AGREEMENT:.0%} ({within} of {len(rounds)} rounds within)"
    )
    print(
        f"gap p50: netbench {median(per_round('netbench', 'gap')):.2f} ms, Go client"
        f" {median(per_round('go', 'gap')):.2f} ms, difference {median(gap):+.1%} (median)"
    )


if __name__ == "__main__":
    main()
