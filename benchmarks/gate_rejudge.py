"""Judge the trials of a ``gate_false_alarm.py --dump`` run again under another gate.

Each experiment's per-trial figures are replayed look by look through the rule given here
(thresholds, sequential design, alpha), exactly as the gate would have seen them had it
run with that rule. A rule that would have wanted more trials than the recorded run took
cannot be judged further: those experiments are counted as ``short`` (not a verdict).

    python benchmarks/gate_rejudge.py /tmp/gate_cpu.jsonl --thresholds server.cpu_ms_per_request:5%
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_netbench import parse_thresholds
from pytest_netbench._compare.family import GateRule, decide_look
from pytest_netbench._compare.sequential import SequentialDesign


def replay(row: Mapping[str, Any], thresholds_text: str, rule: GateRule) -> tuple[str, int]:
    """(decision, trials a side) of one recorded experiment under ``rule``."""
    assert rule.design is not None
    thresholds = parse_thresholds(thresholds_text)
    recorded = min(len(v) for side in ("base", "head") for v in row[side].values())
    for look in rule.design.looks:
        if look > recorded:
            return "short", recorded
        values = {
            t.metric: (row["head"][t.metric][:look], row["base"][t.metric][:look])
            for t in thresholds
        }
        decision = decide_look(values, thresholds, rule)
        if decision != "continue":
            return decision, look
    return "unclear", rule.design.budget


def tally(rows: Sequence[Mapping[str, Any]], thresholds: str, rule: GateRule) -> None:
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    trials: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        decision, used = replay(row, thresholds, rule)
        outcomes[row["scenario"]][decision] += 1
        trials[row["scenario"]].append(used)
    print(
        f"gate={thresholds} alpha={rule.alpha:g} ({rule.design.describe() if rule.design else ''})"
    )
    print(
        f"{'scenario':<10} {'experiments':>11} {'fired':>7} {'unclear':>8} {'ok':>6} {'short':>6}"
        f" {'trials/side':>12}"
    )
    for scenario, counts in outcomes.items():
        n = sum(counts.values())
        mean = sum(trials[scenario]) / max(1, len(trials[scenario]))
        print(
            f"{scenario:<10} {n:>11} {counts['regression']:>7} {counts['unclear']:>8}"
            f" {counts['ok'] + counts['improvement']:>6} {counts['short']:>6} {mean:>12.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", help="a file written by gate_false_alarm.py --dump")
    parser.add_argument(
        "--thresholds", default="rps:5%,p50_ms:5%,p99_ms:10%,server.cpu_ms_per_request:5%"
    )
    parser.add_argument("--sequential", default="3:18", metavar="BATCH:BUDGET")
    parser.add_argument("--alpha", type=float, default=0.01)
    args = parser.parse_args()
    with open(args.dump, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    batch, budget = (int(n) for n in args.sequential.split(":"))
    rule = GateRule(alpha=args.alpha, design=SequentialDesign.every(batch, budget))
    tally(rows, args.thresholds, rule)


if __name__ == "__main__":
    main()
