"""Plain LoadResults for tests of the layers above the engine (reports, gate, storage)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pytest_netbench._model import LatencySummary, LoadResult


def make_result(
    ok: int,
    *,
    errors: Mapping[str, int] | None = None,
    p50_ms: float = math.nan,
    p99_ms: float = math.nan,
    count: int | None = None,
    duration_s: float = 1.0,
    bytes_read: int = 0,
    bytes_written: int = 0,
    valid: bool = True,
    invalid_reasons: tuple[str, ...] = (),
    invalid_causes: tuple[str, ...] = (),
    latency_histogram: str = "",
) -> LoadResult:
    """A closed-loop result with ``ok`` 200s plus ``errors``; sent is their sum."""
    errors = dict(errors or {})
    return LoadResult(
        mode="closed",
        url="http://127.0.0.1:1/",
        duration_s=duration_s,
        sent=ok + sum(errors.values()),
        ok=ok,
        errors=errors,
        in_flight=0,
        status_codes={200: ok},
        bytes_read=bytes_read,
        bytes_written=bytes_written,
        latency=LatencySummary(count=ok if count is None else count, p50_ms=p50_ms, p99_ms=p99_ms),
        valid=valid,
        invalid_reasons=invalid_reasons,
        invalid_causes=invalid_causes,
        latency_histogram=latency_histogram,
    )
