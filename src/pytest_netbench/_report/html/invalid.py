"""Every result of a session that cannot be trusted, and why: the loads, the sweep steps,
the capacity steps, the cold starts and crosschecks whose kept run is invalid.

Runs discarded and rerun are not here (the report's discarded-runs table has them): only
what the figures shown were computed from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._report.matrix import effective_params


@dataclass(frozen=True, slots=True)
class InvalidFinding:
    """One invalid result: which test, which part of it, and the reasons in its words."""

    function: str
    params: Mapping[str, str]
    where: str  # "trial 2", "step at 1,500 req/s", "" for a single load
    reasons: tuple[str, ...]
    causes: tuple[str, ...]

    @property
    def label(self) -> str:
        """``server=tornado, connections=50 (trial 2)``."""
        text = ", ".join(f"{k}={v}" for k, v in self.params.items())
        if self.where:
            text = f"{text} ({self.where})" if text else self.where
        return text


def invalid_findings(
    records: Iterable[Record], experiments: Iterable[ExperimentRecord] = ()
) -> list[InvalidFinding]:
    """Invalid loads first, in session order, then invalid parts of experiments."""
    found: list[InvalidFinding] = []
    records = list(records)
    trials: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    for record in records:
        key = (record.function, tuple(effective_params(record).items()))
        trials[key] = trials.get(key, 0) + 1
    for record in records:
        result = record.result
        if result.valid:
            continue
        params = effective_params(record)
        several = trials[(record.function, tuple(params.items()))] > 1
        found.append(
            InvalidFinding(
                record.function,
                params,
                f"trial {record.trial + 1}" if several else "",
                tuple(result.invalid_reasons) or ("invalid (no reason recorded)",),
                tuple(result.invalid_causes),
            )
        )
    for experiment in experiments:
        for where, kept in _experiment_results(experiment.kind, experiment.data):
            if kept.get("valid", True):
                continue
            found.append(
                InvalidFinding(
                    experiment.function,
                    effective_params(experiment),
                    where,
                    tuple(str(r) for r in kept.get("invalid_reasons") or ())
                    or ("invalid (no reason recorded)",),
                    tuple(str(c) for c in kept.get("invalid_causes") or ()),
                )
            )
    return found


def _experiment_results(
    kind: str, data: Mapping[str, Any]
) -> Sequence[tuple[str, Mapping[str, Any]]]:
    """(where, the kept result's dict) for each load an experiment's figures came from."""
    if kind == "sweep":
        return [
            (f"{kind} step at {_rate(step.get('rate'))} req/s", step.get("result") or {})
            for step in data.get("steps") or ()
        ]
    if kind == "capacity":
        return [
            (f"capacity step at {_rate(step.get('rate'))} req/s", step.get("result") or {})
            for step in data.get("steps") or ()
        ]
    result = data.get("result")
    if isinstance(result, Mapping):
        return [(kind.replace("_", " "), result)]
    return []


def _rate(value: object) -> str:
    return f"{float(value):,.0f}" if isinstance(value, int | float) else "?"
