"""Trials: the same load run several times, the median one chosen, the spread shown; and
A/B trials, two targets run in ABBA order so drift hits both alike.

A trial that the generator made untrustworthy is run again (see ``retries``); the result
keeps every run, says how many were discarded and why, and is invalid only when a trial
stayed invalid on every attempt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_netbench._compare.metrics import metric_value
from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.running import default_runner, discard_causes
from pytest_netbench._load.attempts import (
    DEFAULT_RETRIES,
    Attempts,
    Runner,
    check_retries,
    run_with_retries,
)
from pytest_netbench._model import LoadResult, LoadSpec


def median_trial(results: Sequence[LoadResult]) -> LoadResult:
    """The trial with the median throughput (the lower middle one for an even count)."""
    return results[median_index(results)]


def median_index(results: Sequence[LoadResult]) -> int:
    """Where :func:`median_trial`'s choice is in ``results``."""
    if not results:
        raise SpecError("a median trial needs at least one result")
    ranked = sorted(range(len(results)), key=lambda i: results[i].rps)
    return ranked[(len(ranked) - 1) // 2]


@dataclass(frozen=True, slots=True)
class TrialsResult:
    """Every trial of one load, in the order run, each with the attempts discarded."""

    trials: tuple[Attempts, ...]

    @property
    def results(self) -> tuple[LoadResult, ...]:
        """The result kept for each trial."""
        return tuple(t.kept for t in self.trials)

    @property
    def median(self) -> LoadResult:
        return median_trial(self.results)

    @property
    def valid(self) -> bool:
        """False only when some trial was invalid on every attempt."""
        return all(r.valid for r in self.results)

    @property
    def discarded(self) -> tuple[LoadResult, ...]:
        return tuple(r for t in self.trials for r in t.discarded)

    @property
    def discarded_causes(self) -> dict[str, int]:
        """Why runs were discarded: cause kind -> number of runs."""
        return discard_causes(self.discarded)

    def spread(self, metric: str = "rps") -> float:
        """(max - min) / median of ``metric`` over the kept trials; 0 for one trial."""
        values = sorted(metric_value(r, metric) for r in self.results)
        values = [v for v in values if not math.isnan(v)]
        if len(values) < 2:
            return 0.0
        middle = values[(len(values) - 1) // 2]
        return (values[-1] - values[0]) / middle if middle else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "trials",
            "valid": self.valid,
            "median_trial": median_index(self.results),
            "rps_spread": _json_float(self.spread("rps")),
            "discarded": len(self.discarded),
            "discarded_causes": self.discarded_causes,
            "trials": [t.to_dict() for t in self.trials],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrialsResult:
        return cls(tuple(Attempts.from_dict(t) for t in data["trials"]))


def run_trials(
    spec: LoadSpec,
    trials: int = 1,
    *,
    retries: int = DEFAULT_RETRIES,
    runner: Runner | None = None,
) -> TrialsResult:
    """Run ``spec`` ``trials`` times (each with up to ``retries`` reruns, see
    :func:`run_with_retries`)."""
    _check_trials(trials)
    check_retries(retries)
    run = runner or default_runner()
    return TrialsResult(tuple(run_with_retries(spec, run, retries) for _ in range(trials)))


@dataclass(frozen=True, slots=True)
class Arm:
    """One side of an A/B comparison: a name, its load, and the runner that drives it (so
    each arm's managed server is the one sampled)."""

    name: str
    spec: LoadSpec
    runner: Runner | None = None


@dataclass(frozen=True, slots=True)
class AbResult:
    """Both arms' trials, and the order the loads actually ran in."""

    a: TrialsResult
    b: TrialsResult
    names: tuple[str, str]
    order: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return self.a.valid and self.b.valid

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "ab",
            "names": list(self.names),
            "order": list(self.order),
            "valid": self.valid,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AbResult:
        first, second = data["names"]
        return cls(
            a=TrialsResult.from_dict(data["a"]),
            b=TrialsResult.from_dict(data["b"]),
            names=(str(first), str(second)),
            order=tuple(str(n) for n in data["order"]),
        )


def ab_order(trials: int) -> list[tuple[int, int]]:
    """(trial, arm index) pairs in ABBA order: A B, B A, A B, ... so a drift over the
    session (heat, other load) falls on both arms alike."""
    _check_trials(trials)
    order = []
    for trial in range(trials):
        arms = (0, 1) if trial % 2 == 0 else (1, 0)
        order += [(trial, arm) for arm in arms]
    return order


def ab_trials(
    a: Arm,
    b: Arm,
    trials: int = 2,
    *,
    retries: int = DEFAULT_RETRIES,
) -> AbResult:
    """``trials`` trials of each arm, interleaved in ABBA order."""
    check_retries(retries)
    if a.name == b.name:
        raise SpecError(f"the two arms need different names, both are {a.name!r}")
    arms = (a, b)
    runners = tuple(arm.runner or default_runner() for arm in arms)
    done: tuple[list[Attempts], list[Attempts]] = ([], [])
    order: list[str] = []
    for _trial, index in ab_order(trials):
        done[index].append(run_with_retries(arms[index].spec, runners[index], retries))
        order.append(arms[index].name)
    return AbResult(
        a=TrialsResult(tuple(done[0])),
        b=TrialsResult(tuple(done[1])),
        names=(a.name, b.name),
        order=tuple(order),
    )


def _check_trials(trials: int) -> None:
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise SpecError(f"trials must be a whole number >= 1, got {trials!r}")


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value
