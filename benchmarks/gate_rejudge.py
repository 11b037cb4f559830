"""Judge the trials of a ``gate_false_alarm.py --dump`` run again under another gate.

Each experiment's per-trial figures are replayed look by look through the rule given here
(thresholds, sequential design, alpha), exactly as the gate would have seen them had it
run with that rule. A rule that would have wanted more trials than the recorded run took
cannot be judged further: those experiments are counted as ``short`` (not a verdict), and
since the run stopped them because it had decided, the other figures of such a rule are
biased, not just fewer; a run with ``--full-budget`` measured every experiment to its
budget, so no rule with that budget or less runs short. Under the rule the run itself used
(recorded in the dump), every replayed verdict is checked against the recorded one.

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
    missing = [t.metric for t in thresholds if t.metric not in row["base"]]
    if missing:
        raise SystemExit(
            f"the dump has no figures for {', '.join(missing)}; it holds {', '.join(row['base'])}"
        )
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


def tally(
    rows: Sequence[Mapping[str, Any]], thresholds: str, rule: GateRule, same_rule: bool
) -> None:
    """Print the outcomes; under the very rule that took the trials, each replayed verdict
    must be the one recorded, or the replay is not faithful and the script stops."""
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    trials: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        decision, used = replay(row, thresholds, rule)
        if same_rule and decision != row["decision"]:
            raise SystemExit(
                f"replay of {row['scenario']} #{row['index'] + 1} gave {decision!r}, the run"
                f" recorded {row['decision']!r}: the replay is not faithful"
            )
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
        lines = [json.loads(line) for line in f if line.strip()]
    rows = [line for line in lines if "scenario" in line]
    recorded = next((line["rule"] for line in lines if "rule" in line), None)
    batch, budget = (int(n) for n in args.sequential.split(":"))
    rule = GateRule(alpha=args.alpha, design=SequentialDesign.every(batch, budget))
    same_rule = recorded is not None and recorded == {
        "thresholds": args.thresholds,
        "alpha": rule.alpha,
        "looks": list(rule.design.looks) if rule.design else [],
    }
    tally(rows, args.thresholds, rule, same_rule)
    if same_rule:
        print(f"(the rule the run used: all {len(rows)} replayed verdicts match the recorded ones)")


if __name__ == "__main__":
    main()
