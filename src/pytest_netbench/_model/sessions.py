"""A user flow's sessions (``LoadResult.sessions``): how many ran, ended, failed and where.

A session is one run of the flow function by one virtual user. Sessions started inside the
window count; ``started == completed + failed + in_progress`` always (``in_progress``: still
running when the load ended, neither completed nor failed, as a request in flight).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._model.sections import LatencySummary, summary_dict, summary_from
from pytest_netbench._public import publish

# Why a session failed: an error kind of the request it failed at (the server's answer), or
# "flow": the flow function itself raised (a bug in the flow, never counted as a server error).
FLOW_FAILURE = "flow"


@dataclass(frozen=True, slots=True)
class SessionStats:
    """The sessions of a flow load; ``duration`` is of the completed ones (think time
    included)."""

    users: int
    started: int
    completed: int
    failed: int
    in_progress: int
    # Open model: sessions due inside the window that no user had started when it ended.
    not_started: int = 0
    # step name -> sessions that failed at it ("(no request)" before a flow's first one)
    failed_at: Mapping[str, int] = field(default_factory=dict)
    # failure kind -> sessions: an error kind of the request, or "flow"
    failure_kinds: Mapping[str, int] = field(default_factory=dict)
    # failure kind -> the first failure's description (a flow's exception and traceback)
    failure_samples: Mapping[str, str] = field(default_factory=dict)
    duration: LatencySummary = field(default_factory=LatencySummary)
    duration_histogram: str = field(default="", repr=False, compare=False)
    # flow name -> sessions started of it (several flows by weight; one entry otherwise)
    by_flow: Mapping[str, int] = field(default_factory=dict)
    # each flow the load ran, as module:function -> its weight (1 for a single flow)
    flows: Mapping[str, int] = field(default_factory=dict)

    @property
    def flow_errors(self) -> int:
        """Sessions whose flow function raised (not the server's doing)."""
        return self.failure_kinds.get(FLOW_FAILURE, 0)

    @property
    def p50_ms(self) -> float:
        return self.duration.p50_ms

    @property
    def p99_ms(self) -> float:
        return self.duration.p99_ms

    def to_dict(self) -> dict[str, Any]:
        return {
            "users": self.users,
            "started": self.started,
            "completed": self.completed,
            "failed": self.failed,
            "in_progress": self.in_progress,
            "not_started": self.not_started,
            "failed_at": dict(self.failed_at),
            "failure_kinds": dict(self.failure_kinds),
            "failure_samples": dict(self.failure_samples),
            "duration": summary_dict(self.duration),
            "duration_histogram": self.duration_histogram,
            "by_flow": dict(self.by_flow),
            "flows": dict(self.flows),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionStats:
        return cls(
            users=int(data["users"]),
            started=int(data["started"]),
            completed=int(data["completed"]),
            failed=int(data["failed"]),
            in_progress=int(data["in_progress"]),
            not_started=int(data.get("not_started", 0)),
            failed_at={str(k): int(v) for k, v in data.get("failed_at", {}).items()},
            failure_kinds={str(k): int(v) for k, v in data.get("failure_kinds", {}).items()},
            failure_samples={str(k): str(v) for k, v in data.get("failure_samples", {}).items()},
            duration=summary_from(data.get("duration") or {}),
            duration_histogram=str(data.get("duration_histogram", "")),
            by_flow={str(k): int(v) for k, v in data.get("by_flow", {}).items()},
            flows={str(k): int(v) for k, v in data.get("flows", {}).items()},
        )


publish(globals())
