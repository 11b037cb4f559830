"""Where the time went between two runs: the functions ranked by their change in server
CPU per request from base to head, from the profiles of both (data only; ``_report``
words it).

A function's CPU per request is its share of the profile's samples (on top of the stack:
the CPU it spent itself) times the server's CPU per request in that profiled run. Its
change is head's less base's, and its share of the whole change is that change over the
change of the server's CPU per request. The noise rule is the sampling error at the
sample counts there are: a share ``p`` read from ``n`` samples is off by about
``sqrt(p (1 - p) / n)`` (binomial; at least one sample's worth, ``1 / n``); a change
counts as beyond noise when it exceeds :data:`NOISE_SIGMAS` times the two sides' errors
together, scaled to ms per request. So an A/A comparison of one server names nothing,
and a function that took 1 % more of 300 samples is not called a cause.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_netbench._compare.records import Record
from pytest_netbench._model import LoadResult, ServerProfile
from pytest_netbench._public import publish

NOISE_SIGMAS = 3.5
TOP = 10


@dataclass(frozen=True, slots=True)
class FunctionChange:
    """One function's server CPU per request (its own, ms) in base and head."""

    name: str
    base_ms: float
    head_ms: float
    noise_ms: float  # NOISE_SIGMAS standard errors of the difference
    share_of_change: float  # of the server's whole change in CPU per request (nan: none)

    @property
    def change_ms(self) -> float:
        return self.head_ms - self.base_ms

    @property
    def beyond_noise(self) -> bool:
        return abs(self.change_ms) > self.noise_ms


@dataclass(frozen=True, slots=True)
class WhereTimeWent:
    """One test's functions with the largest changes, ranked by their change (the most
    added CPU first, the most saved last)."""

    key: str
    base_cpu_ms: float
    head_cpu_ms: float
    base_samples: int
    head_samples: int
    changes: tuple[FunctionChange, ...]
    # Both sides' folded stacks, for a differential flame graph (empty: not kept).
    base_folded: Mapping[str, int] = field(default_factory=dict, repr=False)
    head_folded: Mapping[str, int] = field(default_factory=dict, repr=False)

    @property
    def named(self) -> tuple[FunctionChange, ...]:
        """The changes beyond noise, in rank order."""
        return tuple(c for c in self.changes if c.beyond_noise)


def _self_shares(profile: ServerProfile) -> dict[str, int]:
    own: dict[str, int] = {}
    for stack, count in profile.folded.items():
        leaf = stack.rsplit(";", 1)[-1]
        own[leaf] = own.get(leaf, 0) + count
    return own


def _error_ms(samples: int, total: int, cpu_ms: float) -> float:
    if not total or math.isnan(cpu_ms):
        return math.nan
    p = samples / total
    return cpu_ms * math.sqrt(max(p * (1 - p), 1 / total) / total)


def change_noise_ms(
    base_samples: int,
    base_total: int,
    base_cpu_ms: float,
    head_samples: int,
    head_total: int,
    head_cpu_ms: float,
) -> float:
    """The noise rule: :data:`NOISE_SIGMAS` standard errors of the difference between a
    frame's CPU per request read from ``base_samples`` of ``base_total`` and from
    ``head_samples`` of ``head_total`` (a change within it is not told from sampling)."""
    return NOISE_SIGMAS * math.hypot(
        _error_ms(base_samples, base_total, base_cpu_ms),
        _error_ms(head_samples, head_total, head_cpu_ms),
    )


def where_time_went(
    key: str, base: ServerProfile, head: ServerProfile, top: int = TOP
) -> WhereTimeWent:
    """``head`` against ``base``: every function's change in CPU per request, ranked."""
    own_b, own_h = _self_shares(base), _self_shares(head)
    n_b, n_h = sum(own_b.values()), sum(own_h.values())
    c_b, c_h = base.cpu_ms_per_request, head.cpu_ms_per_request
    whole = c_h - c_b
    changes = []
    for name in set(own_b) | set(own_h):
        k_b, k_h = own_b.get(name, 0), own_h.get(name, 0)
        base_ms = k_b / n_b * c_b if n_b else 0.0
        head_ms = k_h / n_h * c_h if n_h else 0.0
        noise = change_noise_ms(k_b, n_b, c_b, k_h, n_h, c_h)
        share = (head_ms - base_ms) / whole if whole and not math.isnan(whole) else math.nan
        changes.append(FunctionChange(name, base_ms, head_ms, noise, share))
    # The ``top`` largest changes either way (a head that no longer runs a function saved
    # all of its CPU), shown the most added first and the most saved last.
    changes.sort(key=lambda c: (-abs(c.change_ms), c.name))
    kept = sorted(changes[:top], key=lambda c: (-c.change_ms, c.name))
    return WhereTimeWent(key, c_b, c_h, n_b, n_h, tuple(kept), dict(base.folded), dict(head.folded))


def profiled(results: Iterable[LoadResult]) -> ServerProfile | None:
    """The profile of a side's loads, when one of them has one to read."""
    for result in results:
        if result.profile is not None and not result.profile.problem and result.profile.folded:
            return result.profile
    return None


def _key(record: Record) -> str:
    """The test a record belongs to, as ``gate.record_key`` names it."""
    return f"{record.nodeid}#{record.label}" if record.label else record.nodeid


def where_time_went_runs(
    current: Sequence[Record], baseline: Sequence[Record]
) -> tuple[WhereTimeWent, ...]:
    """Each test profiled in both runs (a stored baseline and this session)."""
    base_by_key: dict[str, list[LoadResult]] = {}
    for record in baseline:
        base_by_key.setdefault(_key(record), []).append(record.result)
    head_by_key: dict[str, list[LoadResult]] = {}
    for record in current:
        head_by_key.setdefault(_key(record), []).append(record.result)
    out = []
    for key, heads in head_by_key.items():
        head = profiled(heads)
        base = profiled(base_by_key.get(key, ()))
        if head is not None and base is not None:
            out.append(where_time_went(key, base, head))
    return tuple(out)


publish(globals())
