"""Where the server spent its CPU: a profile of its process tree (``LoadResult.profile``).

The profile comes from a run of its own after the measured one (the figures the gate
judges are never those of a sampled server): py-spy for a CPython server, Linux ``perf``
sampling the CPU clock for a native one. Its stacks are kept folded (``a;b;c 12``, the
format flame graphs read), bounded to the most sampled :data:`MAX_STACKS`; the functions
are ranked from them: ``self`` (samples with the function on top), ``total`` (samples
with it anywhere in the stack), and the CPU per request each stands for (its share of
the samples times the server's CPU per request in the profiled run).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._public import publish

MAX_STACKS = 2000
OTHER_STACKS = "[other stacks]"


@dataclass(frozen=True, slots=True)
class FunctionCost:
    """One function of a profile: its samples on top of the stack (``self``) and
    anywhere in it (``total``), as shares of all samples, and the server CPU per request
    they stand for, in ms (nan when the server's CPU was not measured)."""

    name: str
    self_samples: int
    total_samples: int
    self_share: float
    total_share: float
    self_cpu_ms_per_request: float
    total_cpu_ms_per_request: float


@dataclass(frozen=True, slots=True)
class ServerProfile:
    """A profile of the managed server's process tree, or why there is none
    (``problem``: one line; the load ran and was judged all the same)."""

    tool: str = ""  # "py-spy" or "perf"
    samples: int = 0
    rate_hz: int = 0
    duration_s: float = 0.0
    processes: int = 0  # of the tree, when the profile began
    ok: int = 0  # ok responses of the profiled run
    # The server's CPU per ok response that the samples share (user time for py-spy, which
    # samples the Python code holding the GIL; user and system for perf), in the profiled
    # run and in the measured one: their ratio is what sampling cost it.
    cpu_ms_per_request: float = math.nan
    measured_cpu_ms_per_request: float = math.nan
    folded: Mapping[str, int] = field(default_factory=dict, repr=False)
    problem: str = ""

    @property
    def sampling_cost(self) -> float:
        """The profiled run's server CPU per request over the measured run's (nan: not
        known)."""
        if not self.measured_cpu_ms_per_request > 0:
            return math.nan
        return self.cpu_ms_per_request / self.measured_cpu_ms_per_request

    def functions(self, top: int = 20) -> tuple[FunctionCost, ...]:
        """The ``top`` functions by total samples (then self), most first."""
        own: Counter[str] = Counter()
        whole: Counter[str] = Counter()
        for stack, count in self.folded.items():
            frames = stack.split(";")
            own[frames[-1]] += count
            for name in set(frames):
                whole[name] += count
        total = sum(self.folded.values())
        if not total:
            return ()
        per_request = self.cpu_ms_per_request
        ranked = sorted(whole, key=lambda name: (-whole[name], -own[name], name))
        return tuple(
            FunctionCost(
                name=name,
                self_samples=own[name],
                total_samples=whole[name],
                self_share=own[name] / total,
                total_share=whole[name] / total,
                self_cpu_ms_per_request=own[name] / total * per_request,
                total_cpu_ms_per_request=whole[name] / total * per_request,
            )
            for name in ranked[:top]
        )

    def hottest(self, top: int = 20) -> tuple[FunctionCost, ...]:
        """The ``top`` functions by self samples: where the CPU was actually spent."""
        ranked = sorted(self.functions(top=10**9), key=lambda f: (-f.self_samples, f.name))
        return tuple(f for f in ranked[:top] if f.self_samples)

    def to_dict(self) -> dict[str, Any]:
        def number(value: float) -> float | None:
            return None if math.isnan(value) else value

        return {
            "tool": self.tool,
            "samples": self.samples,
            "rate_hz": self.rate_hz,
            "duration_s": self.duration_s,
            "processes": self.processes,
            "ok": self.ok,
            "cpu_ms_per_request": number(self.cpu_ms_per_request),
            "measured_cpu_ms_per_request": number(self.measured_cpu_ms_per_request),
            "sampling_cost": number(self.sampling_cost),
            "problem": self.problem,
            "top_functions": [
                {
                    "name": f.name,
                    "self_samples": f.self_samples,
                    "total_samples": f.total_samples,
                    "self_share": f.self_share,
                    "total_share": f.total_share,
                    "self_cpu_ms_per_request": number(f.self_cpu_ms_per_request),
                    "total_cpu_ms_per_request": number(f.total_cpu_ms_per_request),
                }
                for f in self.hottest(20)
            ],
            "folded": dict(self.folded),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServerProfile:
        def number(value: object) -> float:
            return math.nan if value is None else float(value)  # type: ignore[arg-type]

        return cls(
            tool=str(data.get("tool", "")),
            samples=int(data.get("samples", 0)),
            rate_hz=int(data.get("rate_hz", 0)),
            duration_s=float(data.get("duration_s", 0.0)),
            processes=int(data.get("processes", 0)),
            ok=int(data.get("ok", 0)),
            cpu_ms_per_request=number(data.get("cpu_ms_per_request")),
            measured_cpu_ms_per_request=number(data.get("measured_cpu_ms_per_request")),
            folded={str(k): int(v) for k, v in (data.get("folded") or {}).items()},
            problem=str(data.get("problem", "")),
        )


def bounded(folded: Mapping[str, int], most: int = MAX_STACKS) -> dict[str, int]:
    """The ``most`` most sampled stacks; the rest summed under one :data:`OTHER_STACKS`."""
    ranked = sorted(folded.items(), key=lambda item: (-item[1], item[0]))
    kept = dict(ranked[:most])
    rest = sum(count for _, count in ranked[most:])
    if rest:
        kept[OTHER_STACKS] = kept.get(OTHER_STACKS, 0) + rest
    return kept


publish(globals())
