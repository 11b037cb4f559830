"""How often does the regression gate cry wolf, and how often does it catch a real slowdown?

Starts two copies of a tiny asyncio HTTP server (subprocesses, loopback, ports chosen by
the kernel) and measures them in interleaved trials with ``pytest_netbench.http_load``,
then asks the gate (``pytest_netbench.compare_values``) for a verdict:

* A/A: both servers identical. Any "regression" is a false alarm.
* A/B: the second server takes 10 % longer per request. A "regression" is a catch.

Each experiment runs ``--trials`` trials a side; the same experiment is repeated
``--experiments`` times and the rates are printed, along with the same data judged from a
single trial a side (threshold only), which shows why trials matter.

The server's per-request cost is either a sleep (``--work sleep``: latency-bound, like a
server waiting on a backend) or a busy loop (``--work cpu``: CPU-bound, the noisy case on
a shared machine).

    python benchmarks/gate_false_alarm.py --experiments 30 --trials 5 --duration 0.3
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_netbench import (
    LoadResult,
    compare_values,
    http_load,
    metric_value,
    parse_thresholds,
)

SERVER_SOURCE = textwrap.dedent(
    """
    import asyncio, sys, time

    WORK, COST_US = sys.argv[1], float(sys.argv[2])
    BODY = b"hello"
    RESPONSE = (b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n"
                b"Content-Type: text/plain\\r\\n\\r\\n" % len(BODY)) + BODY

    def spin(us):
        end = time.perf_counter() + us / 1e6
        while time.perf_counter() < end:
            pass

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\\r\\n\\r\\n")
                if not head:
                    break
                if WORK == "sleep":
                    await asyncio.sleep(COST_US / 1e6)
                else:
                    spin(COST_US)
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port = server.sockets[0].getsockname()[1]
        print(f"NETBENCH_LISTENING port={port}", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())
    """
)


class TinyServer:
    """One server subprocess; stopped (and waited for) on exit."""

    def __init__(self, work: str, cost_us: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER_SOURCE, work, str(cost_us)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.search(r"port=(\d+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{match.group(1)}/"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> TinyServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Tally:
    verdicts: Counter[str]
    experiments: int = 0

    def add(self, verdicts: Sequence[str]) -> None:
        self.experiments += 1
        if "regression" in verdicts:
            self.verdicts["fired"] += 1
        elif "unclear" in verdicts:
            self.verdicts["unclear"] += 1
        else:
            self.verdicts["quiet"] += 1

    def rate(self, key: str) -> str:
        n = self.verdicts[key]
        return f"{n}/{self.experiments} ({100 * n / max(1, self.experiments):.0f}%)"


def measure(url: str, args: argparse.Namespace) -> LoadResult:
    return http_load(
        url,
        connections=args.connections,
        duration=args.duration,
        warmup=args.warmup,
        loop="asyncio",
    )


def judge(current: list[LoadResult], baseline: list[LoadResult], thresholds_text: str) -> list[str]:
    verdicts: list[str] = []
    for threshold in parse_thresholds(thresholds_text):
        item = compare_values(
            "x",
            threshold.metric,
            [metric_value(r, threshold.metric) for r in current],
            [metric_value(r, threshold.metric) for r in baseline],
            threshold,
        )
        verdicts.append(item.verdict)
    return verdicts


def run(args: argparse.Namespace) -> None:
    cost = args.cost_us
    per_metric: dict[str, Counter[str]] = {}
    tallies = {
        (scenario, mode): Tally(Counter())
        for scenario in ("A/A", "A/B +10%")
        for mode in ("trials", "single")
    }
    started = time.monotonic()
    for scenario, slowdown in (("A/A", 1.0), ("A/B +10%", 1.0 + args.slowdown)):
        with TinyServer(args.work, cost) as base, TinyServer(args.work, cost * slowdown) as cur:
            for experiment in range(args.experiments):
                base_runs: list[LoadResult] = []
                cur_runs: list[LoadResult] = []
                for trial in range(args.trials):
                    # Interleave, and alternate who goes first, so drift hits both sides.
                    order = [(base, base_runs), (cur, cur_runs)]
                    if (experiment + trial) % 2:
                        order.reverse()
                    for server, sink in order:
                        sink.append(measure(server.url, args))
                verdicts = judge(cur_runs, base_runs, args.thresholds)
                tallies[(scenario, "trials")].add(verdicts)
                tallies[(scenario, "single")].add(
                    judge(cur_runs[:1], base_runs[:1], args.thresholds)
                )
                for threshold, verdict in zip(
                    parse_thresholds(args.thresholds), verdicts, strict=True
                ):
                    per_metric.setdefault(f"{scenario} {threshold.metric}", Counter())[verdict] += 1
                errors = sum(r.errors_total for r in base_runs + cur_runs)
                if errors:
                    print(f"  note: {errors} errors in experiment {experiment}", flush=True)
            print(
                f"{scenario}: {args.experiments} experiments done "
                f"({time.monotonic() - started:.0f} s so far)",
                flush=True,
            )
    print()
    print(
        f"work={args.work} cost={cost:g}us slowdown={args.slowdown:.0%} "
        f"connections={args.connections} duration={args.duration}s trials={args.trials} "
        f"experiments={args.experiments} gate={args.thresholds}"
    )
    print(f"{'scenario':<10} {'judged from':<22} {'gate fired':>16} {'unclear':>16} {'quiet':>16}")
    for (scenario, mode), tally in tallies.items():
        label = f"{args.trials} trials a side" if mode == "trials" else "1 trial (threshold)"
        print(
            f"{scenario:<10} {label:<22} {tally.rate('fired'):>16} "
            f"{tally.rate('unclear'):>16} {tally.rate('quiet'):>16}"
        )
    print()
    print("per metric (trials):")
    for key, counts in per_metric.items():
        print(f"  {key:<22} " + ", ".join(f"{v} {counts[v]}" for v in sorted(counts)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=30)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--duration", type=float, default=0.3)
    parser.add_argument("--warmup", type=float, default=0.05)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--work", choices=("sleep", "cpu"), default="sleep")
    parser.add_argument(
        "--cost-us",
        type=float,
        default=None,
        help="per-request cost (default 20000 for sleep, 300 for cpu)",
    )
    parser.add_argument("--slowdown", type=float, default=0.10)
    parser.add_argument("--thresholds", default="rps:5%,p50_ms:5%,p99_ms:10%")
    args = parser.parse_args()
    if args.cost_us is None:
        args.cost_us = 20_000.0 if args.work == "sleep" else 300.0
    run(args)


if __name__ == "__main__":
    main()
