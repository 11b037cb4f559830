"""A mix's figures at each step of an experiment (a sweep's rate, a capacity search's load):
each request kind's headline figures, flat, as the step's own are beside its full result.

A step's JSON carries them as ``"by_request"``, ``{name: {sent, ok, errors_total, rps,
p50_ms, p90_ms, p99_ms}}`` in the mix's order (``{}`` without a mix; a latency figure is
``null`` for a kind without an ok response), so a reader of a sweep finds each endpoint's
curve without opening every step's ``result``; the tables read the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_netbench._model import LoadResult
from pytest_netbench._model.sections import json_float

# The latency figures a step keeps of each kind (the step's own: p50, p90, p99).
STEP_LATENCY_FIELDS: tuple[str, ...] = ("p50_ms", "p90_ms", "p99_ms")


def step_requests(result: LoadResult) -> dict[str, dict[str, Any]]:
    """Each kind's figures in a step's kept result, in the mix's order."""
    return {
        name: {
            "sent": stats.sent,
            "ok": stats.ok,
            "errors_total": stats.errors_total,
            "rps": stats.rps,
            **{field: json_float(getattr(stats.latency, field)) for field in STEP_LATENCY_FIELDS},
        }
        for name, stats in result.by_request.items()
    }


def stored_step_requests(step: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """A stored step's ``by_request``; for a step stored before it had one, the same
    figures read from its result's (which holds them flat too)."""
    figures = step.get("by_request")
    if figures is None:
        figures = (step.get("result") or {}).get("by_request") or {}
    return {str(name): values for name, values in figures.items()}
