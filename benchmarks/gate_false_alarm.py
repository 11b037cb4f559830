"""How often does the regression gate cry wolf, and how often does it catch a real slowdown?

Starts two copies of a tiny asyncio HTTP server (``servers/tiny_asyncio.py``: subprocesses,
loopback, ports chosen by the kernel, each process tree sampled so
``server.cpu_ms_per_request`` is measured) and
measures them in interleaved trials (ABBA) with ``pytest_netbench.http_load``, asking the
gate for a verdict the way ``pytest --netbench-ab ... --netbench-sequential`` does:

* A/A: both servers identical. Any "regression" is a false alarm.
* A/B: the second server takes 10 % longer per request. A "regression" is a catch.

``--sequential BATCH:BUDGET`` (default 3:18) adds BATCH trials a side per look until the
gate decides or BUDGET trials a side are spent; ``--trials N`` instead judges a fixed N
trials a side once. Each experiment is repeated ``--experiments`` times; printed are the
false alarms, the catches, what stayed unclear, the trials and the load time each
experiment took, each metric's noise (the spread of one trial, from the A/A trials), and
the same data judged from its first trial alone (threshold only).

The server's per-request cost is either a sleep (``--work sleep``: latency-bound, like a
server waiting on a backend) or a busy loop (``--work cpu``: CPU-bound, the noisy case on
a shared machine).

``--other-work N`` runs N noisy neighbours (``servers/neighbour.py``) beside it for the
whole run, as a shared CI runner has: each copies and hashes pieces of a 32 MiB buffer
(CPU, memory bandwidth and cache) for a random 0.05-2 s, then idles for another random
0.05-2 s, about half a core each, seeded by ``--seed``. A/A and A/B experiments alternate,
so both meet the same neighbours. Every experiment starts a fresh pair of servers, as
every CI job does.

    python benchmarks/gate_false_alarm.py --experiments 100 --work cpu --other-work 1
"""

from __future__ import annotations

import argparse
import json
import math
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pytest_netbench import (
    LoadResult,
    ProcessTreeSampler,
    compare_values,
    http_load,
    metric_value,
    parse_thresholds,
)
from pytest_netbench._compare.family import GateRule, decide_look
from pytest_netbench._compare.noise import trial_spread
from pytest_netbench._compare.sequential import SequentialDesign

SERVERS = Path(__file__).resolve().parent / "servers"


class Neighbours:
    """Busy/idle processes that share the machine with the measurement; killed on exit."""

    def __init__(self, count: int, seed: int) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []
        try:
            for index in range(count):
                argv = [sys.executable, str(SERVERS / "neighbour.py"), str(seed + index)]
                self.processes.append(subprocess.Popen(argv))
        except BaseException:  # a kill while starting them: none may outlive the run
            self.__exit__()
            raise

    def __enter__(self) -> Neighbours:
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


class TinyServer:
    """One server subprocess; stopped (and waited for) on exit."""

    def __init__(self, work: str, cost_us: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVERS / "tiny_asyncio.py"), work, str(cost_us)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        try:
            line = self.process.stdout.readline()
        except BaseException:  # a kill while it starts: before __enter__, so stop it here
            self.stop()
            raise
        match = re.search(r"port=(\d+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"server did not start: {line!r}")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}/"

    # What http_load's server= needs, so the server's CPU per request is measured.
    def monitor(self) -> ProcessTreeSampler:
        return ProcessTreeSampler(self.process.pid, port=self.port)

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"server exited with {self.process.returncode}")

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
    """Outcomes of one scenario's experiments, and what they cost."""

    verdicts: Counter[str] = field(default_factory=Counter)
    experiments: int = 0
    trials: list[int] = field(default_factory=list)
    load_seconds: list[float] = field(default_factory=list)

    def add(self, decision: str, trials: int = 0, load_seconds: float = 0.0) -> None:
        self.experiments += 1
        self.verdicts[{"regression": "fired"}.get(decision, decision)] += 1
        self.trials.append(trials)
        self.load_seconds.append(load_seconds)

    def rate(self, key: str) -> str:
        n = self.verdicts[key]
        return f"{n}/{self.experiments} ({100 * n / max(1, self.experiments):.0f}%)"


def measure(server: TinyServer, args: argparse.Namespace) -> LoadResult:
    return http_load(
        server.url,
        server=server,
        connections=args.connections,
        duration=args.duration,
        warmup=args.warmup,
        loop="asyncio",
    )


def figures(results: list[LoadResult], metric: str) -> list[float]:
    return [metric_value(r, metric) for r in results]


def decide(
    current: list[LoadResult], baseline: list[LoadResult], thresholds_text: str, rule: GateRule
) -> str:
    thresholds = parse_thresholds(thresholds_text)
    values = {
        t.metric: (figures(current, t.metric), figures(baseline, t.metric)) for t in thresholds
    }
    return decide_look(values, thresholds, rule)


def single_trial(current: LoadResult, baseline: LoadResult, thresholds_text: str) -> str:
    """The threshold alone on one trial a side: what a gate without trials does."""
    verdicts = [
        compare_values(
            "x", t.metric, [metric_value(current, t.metric)], [metric_value(baseline, t.metric)], t
        ).verdict
        for t in parse_thresholds(thresholds_text)
    ]
    return "regression" if "regression" in verdicts else "ok"


def experiment(
    base: TinyServer, head: TinyServer, args: argparse.Namespace, rule: GateRule, first: int
) -> tuple[str, list[LoadResult], list[LoadResult], int, float]:
    """One sequential (or fixed) comparison: (decision, base trials, head trials, trials a
    side the decision took, load s it took). With ``--full-budget`` every experiment goes
    on to the budget after deciding, so that any other rule can be replayed on its trials."""
    assert rule.design is not None
    base_runs: list[LoadResult] = []
    head_runs: list[LoadResult] = []
    decision = "continue"
    stopped_at = rule.design.budget
    for look in rule.design.looks:
        while len(base_runs) < look:
            # ABBA, and alternate who opens the experiment, so drift hits both sides.
            order = [(base, base_runs), (head, head_runs)]
            if (first + len(base_runs)) % 2:
                order.reverse()
            for server, sink in order:
                sink.append(measure(server, args))
        if decision == "continue":
            decision = decide(head_runs, base_runs, args.thresholds, rule)
            stopped_at = look
        if decision != "continue" and not args.full_budget:
            break
    # The gate's cost is what it took up to its decision, whatever was measured after it.
    taken = (*base_runs[:stopped_at], *head_runs[:stopped_at])
    load_s = sum(r.duration_s for r in taken) / 2
    decision = "unclear" if decision == "continue" else decision
    return decision, base_runs, head_runs, stopped_at, load_s


def run(args: argparse.Namespace) -> None:
    cost = args.cost_us
    if args.trials:
        design = SequentialDesign.fixed(args.trials)
    else:
        batch, budget = (int(n) for n in args.sequential.split(":"))
        design = SequentialDesign.every(batch, budget)
    rule = GateRule(design=design)
    metrics = [t.metric for t in parse_thresholds(args.thresholds)]
    shown = list(dict.fromkeys([*metrics, "rps", "p50_ms", "p99_ms", "server.cpu_ms_per_request"]))
    tallies = {(s, mode): Tally() for s in ("A/A", "A/B +10%") for mode in ("gate", "single")}
    noise_groups: dict[str, list[list[float]]] = {m: [] for m in shown}
    started = time.monotonic()
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115
    if dump is not None:
        # What judged these trials, so gate_rejudge.py can check its replay of them.
        rule_row = {"thresholds": args.thresholds, "alpha": rule.alpha, "looks": design.looks}
        dump.write(json.dumps({"rule": rule_row}) + "\n")
    scenarios = (("A/A", 1.0), ("A/B +10%", 1.0 + args.slowdown))
    with Neighbours(args.other_work, args.seed):
        for index in range(args.experiments):
            # Alternate the scenarios so that both meet the same neighbours and drift.
            for scenario, slowdown in scenarios if index % 2 == 0 else scenarios[::-1]:
                begun = time.monotonic()
                # A fresh pair of servers each time, as each CI job starts its own: two
                # starts of the same code differ a little, and that is noise the gate meets.
                with (
                    TinyServer(args.work, cost) as base,
                    TinyServer(args.work, cost * slowdown) as head,
                ):
                    decision, base_runs, head_runs, stopped_at, load_s = experiment(
                        base, head, args, rule, index
                    )
                tallies[(scenario, "gate")].add(decision, stopped_at, load_s)
                tallies[(scenario, "single")].add(
                    single_trial(head_runs[0], base_runs[0], args.thresholds)
                )
                if scenario == "A/A":
                    for metric in shown:
                        noise_groups[metric] += [
                            figures(base_runs, metric),
                            figures(head_runs, metric),
                        ]
                if dump is not None:
                    row = {
                        "scenario": scenario,
                        "index": index,
                        "decision": decision,
                        "decided_after": stopped_at,
                    }
                    row["base"] = {m: figures(base_runs, m) for m in shown}
                    row["head"] = {m: figures(head_runs, m) for m in shown}
                    row["valid"] = {
                        "base": [r.valid for r in base_runs],
                        "head": [r.valid for r in head_runs],
                    }
                    dump.write(json.dumps(row) + "\n")
                    dump.flush()
                errors = sum(r.errors_total for r in base_runs + head_runs)
                print(
                    f"  {scenario} #{index + 1}: {decision} after {stopped_at} trials a"
                    f" side ({time.monotonic() - begun:.1f} s, {time.monotonic() - started:.0f}"
                    " s so far)" + (f", {errors} errors" if errors else ""),
                    flush=True,
                )
    elapsed = time.monotonic() - started
    if dump is not None:
        dump.close()
    print()
    print(
        f"work={args.work} cost={cost:g}us slowdown={args.slowdown:.0%} "
        f"connections={args.connections} duration={args.duration}s warmup={args.warmup}s "
        f"experiments={args.experiments} other_work={args.other_work} "
        f"({elapsed / 60:.0f} min)\ngate={args.thresholds} alpha={rule.alpha:g} "
        f"({design.describe()})"
    )
    header = (
        f"{'scenario':<10} {'judged from':<20} {'gate fired':>13} {'unclear':>13} {'ok':>13}"
        f" {'trials/side':>12} {'load s/side':>12}"
    )
    print(header)
    for (scenario, mode), tally in tallies.items():
        label = "the gate" if mode == "gate" else "1 trial (threshold)"
        cost_cells = ""
        if mode == "gate":
            trials = sum(tally.trials) / max(1, len(tally.trials))
            seconds = sum(tally.load_seconds) / max(1, len(tally.load_seconds))
            cost_cells = f" {trials:>7.1f} (<={max(tally.trials, default=0)}) {seconds:>7.1f}"
            cost_cells += f" (<={max(tally.load_seconds, default=0):.0f})"
        print(
            f"{scenario:<10} {label:<20} {tally.rate('fired'):>13} {tally.rate('unclear'):>13} "
            f"{tally.rate('ok'):>13}{cost_cells}"
        )
    print()
    print("noise of one trial (robust relative SD over the A/A trials):")
    for metric, groups in noise_groups.items():
        spread, trials, _groups = trial_spread(groups)
        shown_spread = "n/a" if math.isnan(spread) else f"{spread * 100:.1f}%"
        print(f"  {metric:<27} {shown_spread:>7}  ({trials} trials)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=100)
    parser.add_argument(
        "--sequential",
        default="3:18",
        metavar="BATCH:BUDGET",
        help="trials a side per look and at most (default 3:18)",
    )
    parser.add_argument(
        "--trials", type=int, default=0, help="judge a fixed N trials a side instead"
    )
    parser.add_argument(
        "--full-budget",
        action="store_true",
        help="measure every experiment to the budget after its decision (for --dump: any"
        " rule can then be replayed by gate_rejudge.py without running short)",
    )
    parser.add_argument("--duration", type=float, default=0.3)
    parser.add_argument("--warmup", type=float, default=0.05)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--work", choices=("sleep", "cpu"), default="sleep")
    parser.add_argument(
        "--cost-us",
        type=float,
        default=None,
        help="per-request cost (default 20000 for sleep, 300 for cpu)",
    )
    parser.add_argument("--slowdown", type=float, default=0.10)
    parser.add_argument(
        "--other-work",
        type=int,
        default=0,
        metavar="N",
        help="noisy neighbours running beside the measurement (default 0)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the neighbours' random seed")
    parser.add_argument(
        "--dump",
        metavar="PATH",
        help="write each experiment's per-trial figures as JSON lines, to judge them again",
    )
    parser.add_argument(
        "--thresholds", default="rps:5%,p50_ms:5%,p99_ms:10%,server.cpu_ms_per_request:5%"
    )
    args = parser.parse_args()
    if args.cost_us is None:
        args.cost_us = 20_000.0 if args.work == "sleep" else 300.0
    # A kill ends the run through its `with` blocks, so no server or neighbour outlives it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run(args)


if __name__ == "__main__":
    main()
