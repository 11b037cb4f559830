"""What a flow share brings back, and how the shares become one :class:`LoadResult`.

A share's requests come back as the engine's own :class:`WorkerOutcome` (steps as its
kinds of request) and are merged by the engine's merge, with the steps standing in for a
mix's requests so each lands in ``result.by_request`` under its name; the sessions come
back as a :class:`SessionOutcome` beside it and become ``result.sessions``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_netbench._model import LoadResult, LoadSpec, Request, ServerStats, SessionStats
from pytest_netbench._stats.histogram import encode_histogram, histogram_from_counts
from pytest_netbench._stats.merge import merge_outcomes, summarize
from pytest_netbench._stats.recorder import RequestOutcome, WorkerOutcome


@dataclass(frozen=True, slots=True)
class StepName:
    """A step as the flow first made it: its name, and the method and path it was made with."""

    name: str
    method: str
    path: str


@dataclass(slots=True)
class SessionOutcome:
    """One share's sessions, mergeable across shares like a :class:`WorkerOutcome`."""

    users: int = 0
    started: int = 0
    completed: int = 0
    failed: int = 0
    in_progress: int = 0
    not_started: int = 0
    failed_at: dict[str, int] = field(default_factory=dict)
    failure_kinds: dict[str, int] = field(default_factory=dict)
    failure_samples: dict[str, str] = field(default_factory=dict)
    duration_counts: Counter[int] = field(default_factory=Counter)  # completed, us
    steps: list[StepName] = field(default_factory=list)  # in the share's kind order
    by_flow: dict[str, int] = field(default_factory=dict)  # sessions started, per flow


def merge_flow(
    spec: LoadSpec,
    shares: Sequence[tuple[WorkerOutcome, SessionOutcome]],
    server: ServerStats | None = None,
) -> LoadResult:
    """One result from the shares' outcomes: requests by the engine's merge (each step a
    kind of request; with the managed ``server``'s figures), sessions summed."""
    names: list[StepName] = []
    for _, sessions in shares:
        for step in sessions.steps:
            if step.name not in {n.name for n in names}:
                names.append(step)
    # Each share numbered its steps as they appeared: put its kinds in the merged order.
    outcomes = [_in_order(worker, sessions.steps, names) for worker, sessions in shares]
    as_mix = tuple(Request(s.method, s.path, name=s.name) for s in names)
    result = merge_outcomes(dataclasses.replace(spec, mix=as_mix), outcomes, server)
    stats = _merge_sessions(shares)
    if spec.rate is not None:
        result = _in_session_terms(result, stats)
    return dataclasses.replace(result, spec=spec, sessions=stats)


# The open loop's judgement of its schedule, said of sessions and users (max_users=), as
# a flow's schedule is of sessions: the figures behind it (scheduled, unsent) already are.
_SESSION_WORDS = (
    (" scheduled requests ", " scheduled sessions "),
    ("connection pool limit", "user pool limit"),
    ("raise max_connections", "raise max_users"),
    ("raise connections", "raise users"),
    (" open, below the pool bound", " users, below the pool bound"),
    ("waiting for a connection", "waiting for a user"),
)
_SCHEDULE_CAUSES = frozenset({"rate_not_achieved", "schedule_lag"})


def _in_session_terms(result: LoadResult, stats: SessionStats) -> LoadResult:
    """The open model's achieved rate (of sessions, not of the requests they make) and
    its schedule's invalid reasons in the words of sessions."""
    reasons = list(result.invalid_reasons)
    for index, cause in enumerate(result.invalid_causes):
        if cause in _SCHEDULE_CAUSES:
            for said, meant in _SESSION_WORDS:
                reasons[index] = reasons[index].replace(said, meant)
    generator = result.generator
    if result.duration_s > 0:
        achieved = stats.started / result.duration_s
        generator = dataclasses.replace(generator, achieved_rate=achieved)
    return dataclasses.replace(result, generator=generator, invalid_reasons=tuple(reasons))


def _in_order(
    worker: WorkerOutcome, own: Sequence[StepName], merged: Sequence[StepName]
) -> WorkerOutcome:
    where = {step.name: index for index, step in enumerate(own)}
    by_request = [
        worker.by_request[where[step.name]] if step.name in where else RequestOutcome()
        for step in merged
    ]
    return dataclasses.replace(worker, by_request=by_request)


def _merge_sessions(shares: Sequence[tuple[WorkerOutcome, SessionOutcome]]) -> SessionStats:
    failed_at: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    samples: dict[str, str] = {}
    durations: Counter[int] = Counter()
    by_flow: Counter[str] = Counter()
    for _, s in shares:
        by_flow.update(s.by_flow)
        failed_at.update(s.failed_at)
        kinds.update(s.failure_kinds)
        durations.update(s.duration_counts)
        for kind, text in s.failure_samples.items():
            samples.setdefault(kind, text)
    hist = histogram_from_counts(durations)
    return SessionStats(
        users=sum(s.users for _, s in shares),
        started=sum(s.started for _, s in shares),
        completed=sum(s.completed for _, s in shares),
        failed=sum(s.failed for _, s in shares),
        in_progress=sum(s.in_progress for _, s in shares),
        not_started=sum(s.not_started for _, s in shares),
        failed_at=dict(failed_at.most_common()),
        failure_kinds=dict(kinds.most_common()),
        failure_samples=samples,
        duration=summarize(hist),
        duration_histogram=encode_histogram(hist),
        by_flow=dict(by_flow),
    )
