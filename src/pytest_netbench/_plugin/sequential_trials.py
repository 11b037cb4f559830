"""How many trials a load gets: ``--netbench-trials N``, or batches of trials until the
gate decides (``--netbench-sequential BATCH:BUDGET``).

After each batch the test's trials so far are judged against its baseline -- the other
arm's trials in A/B mode, or the stored run's trials of the same test -- by the same rule
the end-of-session comparison applies (:func:`~pytest_netbench._compare.family.decide_look`,
with the design's spending, so looking after every batch costs no extra false alarms).
The run stops at the first regression, when every gated metric is settled, or when
BUDGET trials a side are spent. A test with nothing to compare with (new, or no stored
run) runs one batch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_netbench._compare.family import GateRule
    from pytest_netbench._compare.sequential import Decision, SequentialDesign
    from pytest_netbench._compare.thresholds import Threshold
    from pytest_netbench._experiment.trials import AbResult, Arm, TrialsResult
    from pytest_netbench._load.attempts import Attempts, Runner
    from pytest_netbench._model import LoadResult, LoadSpec
    from pytest_netbench._plugin.options import Settings

# current results, baseline results -> the gate's answer at this look, and the look in words
# (each gated metric's answer and the smallest change the budget could show at its noise).
Judge = Callable[[Sequence["LoadResult"], Sequence["LoadResult"]], "tuple[Decision, str]"]


def run(
    settings: Settings,
    key: str,
    spec: LoadSpec,
    runner: Runner,
    retries: int,
    looks: list[str] | None = None,
) -> TrialsResult:
    """The trials of one load of test ``key`` (node id, ``#label`` when labelled); each
    look of a sequential gate is added to ``looks`` in words."""
    from pytest_netbench._experiment.trials import run_trials

    judge, design = judge_for(settings), gate_rule(settings).design
    if judge is None or design is None:
        return run_trials(spec, settings.trials, retries=retries, runner=runner)
    baseline = stored_trials(settings, key)
    return trials_in_looks(spec, runner, retries, design, judge, baseline, looks)


def run_ab(
    settings: Settings, base: Arm, head: Arm, retries: int, looks: list[str] | None = None
) -> AbResult:
    """Both arms' trials, interleaved (ABBA), head judged against base after each batch;
    each look is added to ``looks`` in words."""
    from pytest_netbench._experiment.trials import ab_trials

    judge, design = judge_for(settings), gate_rule(settings).design
    if judge is None or design is None:
        return ab_trials(base, head, settings.trials, retries=retries)
    return ab_in_looks(base, head, retries, design, judge, looks)


def gate_rule(settings: Settings) -> GateRule:
    """The rule every comparison of this session applies: sequential when asked."""
    from pytest_netbench._compare.family import DEFAULT_ALPHA, GateRule
    from pytest_netbench._compare.sequential import SequentialDesign

    alpha = DEFAULT_ALPHA if settings.alpha is None else settings.alpha
    if settings.sequential is None:
        return GateRule(alpha=alpha)
    batch, budget = settings.sequential
    return GateRule(alpha=alpha, design=SequentialDesign.every(batch, budget))


def judge_for(settings: Settings) -> Judge | None:
    """current results, baseline results -> the gate's decision at this look (None when
    the trials are not sequential)."""
    if settings.sequential is None or settings.compare_fail is None:
        return None
    from pytest_netbench._compare.family import look
    from pytest_netbench._compare.metrics import EXPERIMENT_METRICS, metric_value, request_name
    from pytest_netbench._compare.thresholds import parse_thresholds
    from pytest_netbench._report.comparison import look_line

    rule = gate_rule(settings)
    thresholds: list[Threshold] = [
        t for t in parse_thresholds(settings.compare_fail) if t.metric not in EXPERIMENT_METRICS
    ]

    def judge(
        current: Sequence[LoadResult], baseline: Sequence[LoadResult]
    ) -> tuple[Decision, str]:
        # A per-request threshold (by_request.search.p99_ms) on a test that does not send
        # that request: nothing of it to judge here; the gate's verdict says so.
        sent = {n for r in (*current, *baseline) for n in r.by_request}
        mine = [t for t in thresholds if request_name(t.metric) in (None, *sent)]
        values = {
            t.metric: (
                [metric_value(r, t.metric) for r in current],
                [metric_value(r, t.metric) for r in baseline],
            )
            for t in mine
        }
        decision, judged = look(values, mine, rule)
        return decision, look_line(len(current), len(baseline), decision, judged)

    return judge


def stored_trials(settings: Settings, key: str) -> list[LoadResult]:
    """The stored baseline's trials of test ``key`` (none when there is no such run: the
    end of the session says so)."""
    if settings.compare_name is None:
        return []
    return list(_stored_groups(settings.storage_dir, settings.compare_name).get(key, ()))


@functools.lru_cache(maxsize=4)
def _stored_groups(root: str, ref: str) -> dict[str, list[LoadResult]]:
    from pytest_netbench._compare.gate import group_by_key
    from pytest_netbench._compare.storage import Storage
    from pytest_netbench._errors import NetbenchError

    try:
        return group_by_key(Storage(root).load(ref or None).records)
    except (NetbenchError, OSError, ValueError):
        return {}


def trials_in_looks(
    spec: LoadSpec,
    runner: Runner,
    retries: int,
    design: SequentialDesign,
    judge: Judge,
    baseline: Sequence[LoadResult],
    looks: list[str] | None = None,
) -> TrialsResult:
    """Trials of one load against a stored baseline, a batch per look of ``design``."""
    from pytest_netbench._experiment.trials import TrialsResult, run_trials

    done: list[Attempts] = []
    for trials in design.looks if baseline else design.looks[:1]:
        done += run_trials(spec, trials - len(done), retries=retries, runner=runner).trials
        if not baseline:
            break
        decision, words = judge([a.kept for a in done], baseline)
        if looks is not None:
            looks.append(words)
        if decision != "continue":
            break
    return TrialsResult(tuple(done))


def ab_in_looks(
    base: Arm,
    head: Arm,
    retries: int,
    design: SequentialDesign,
    judge: Judge,
    looks: list[str] | None = None,
) -> AbResult:
    """A/B trials in one ABBA pattern across the batches, a batch per look, head judged
    against base after each."""
    from pytest_netbench._experiment.trials import AbResult, TrialsResult, ab_trials

    base_runs: list[Attempts] = []
    head_runs: list[Attempts] = []
    order: list[str] = []
    for trials in design.looks:
        count = trials - len(base_runs)
        if len(base_runs) % 2 == 0:
            batch = ab_trials(base, head, count, retries=retries)
            base_runs += batch.a.trials
            head_runs += batch.b.trials
        else:
            # After an odd number of pairs the ABBA pattern goes on with B first.
            batch = ab_trials(head, base, count, retries=retries)
            base_runs += batch.b.trials
            head_runs += batch.a.trials
        order += batch.order
        decision, words = judge([a.kept for a in head_runs], [a.kept for a in base_runs])
        if looks is not None:
            looks.append(words)
        if decision != "continue":
            break
    return AbResult(
        a=TrialsResult(tuple(base_runs)),
        b=TrialsResult(tuple(head_runs)),
        names=(base.name, head.name),
        order=tuple(order),
    )
