"""Streams of server-sent events: netbench's CPU per event against a minimal Go client.

The catalog's Go server (pinned to one core, GOMAXPROCS=1) streams ``/sse``: EVENTS events
EVERY ms apart after FIRST ms. Each tool (pinned to the other core) holds CONNECTIONS
streams at once for DURATION seconds, one stream after another on each connection:
``netbench sse`` (its own process, start-up included, as a user runs it) and
``servers/sse_go/client.go`` (Go's net/http client, a bufio reader counting ``data:``
lines). It prints, per trial and as the median, each tool's events and CPU microseconds
per event (its whole process: user + system), and the ratio netbench / Go; netbench's
own figures of the run (valid or not, first event and gap p50/p99); and the Go client's
own first event and gap p50 (time.Now() around its reads), netbench's against them: an
independent client's agreement.

    python benchmarks/bench_sse.py [--trials 3] [--duration 5] [--connections 500]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=500)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--every", type=int, default=50, help="ms between events")
    parser.add_argument("--first", type=int, default=20, help="ms to the first event")
    args = parser.parse_args()
    server_cpu, tool_cpu = cpus_for_pinning()
    go_client = build_go_sse_client()
    per_event: dict[str, list[float]] = {"netbench": [], "go": []}
    with PinnedServer(server="go-catalog", cpu=server_cpu) as server:
        url = f"{server.url}sse?first_ms={args.first}&every_ms={args.every}&events={args.events}"
        print(f"{args.connections} streams at once, {args.duration:g} s, {url}")
        for trial in range(args.trials):
            with tempfile.TemporaryDirectory() as folder:
                out = Path(folder) / "result.json"
                netbench = [
                    sys.executable, "-m", "pytest_netbench.cli", "sse", url, "--quiet",
                    "-c", str(args.connections), "-d", f"{args.duration}s", "--json", str(out),
                ]  # fmt: skip
                _, cpu = run_pinned(netbench, tool_cpu)
                result = json.loads(out.read_text())
            events = result["stream"]["events"]
            per_event["netbench"].append(cpu / events * 1e6)
            stream = result["stream"]
            print(
                f"trial {trial + 1}: netbench {events:,} events, {cpu:.2f} s CPU,"
                f" {cpu / events * 1e6:.1f} us/event; valid {result['valid']};"
                f" first event p50 {stream['first_event']['p50_ms']:.2f} p99"
                f" {stream['first_event']['p99_ms']:.2f} ms, gap p50"
                f" {stream['gap']['p50_ms']:.2f} p99 {stream['gap']['p99_ms']:.2f} ms"
            )
            for reason in result["invalid_reasons"]:
                print(f"  invalid: {reason}")
            said, cpu = run_pinned(
                [str(go_client), url, str(args.connections), str(args.duration)], tool_cpu
            )
            words = dict(part.split("=") for part in said.split())
            events = int(words["events"])
            per_event["go"].append(cpu / events * 1e6)
            go_first, go_gap = float(words["first_event_p50_ms"]), float(words["gap_p50_ms"])
            ours_first, ours_gap = stream["first_event"]["p50_ms"], stream["gap"]["p50_ms"]
            print(
                f"trial {trial + 1}: go client {events:,} events, {cpu:.2f} s CPU,"
                f" {cpu / events * 1e6:.1f} us/event; first event p50 {go_first:.2f} ms"
                f" (netbench {ours_first / go_first - 1:+.1%}), gap p50 {go_gap:.2f} ms"
                f" (netbench {ours_gap / go_gap - 1:+.1%})"
            )
    ours, theirs = (statistics.median(per_event[k]) for k in ("netbench", "go"))
    print(
        f"median CPU per event: netbench {ours:.1f} us, Go client {theirs:.1f} us,"
        f" ratio {ours / theirs:.2f}x"
    )


if __name__ == "__main__":
    main()
