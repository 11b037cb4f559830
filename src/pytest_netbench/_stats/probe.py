"""The client-delay probe's samples as :class:`ProbeStats`: only probes that started inside
the measured window count, with exact percentiles of the ok ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_netbench._model import ERROR_KINDS, ProbeStats
from pytest_netbench._stats.histogram import count_microseconds, histogram_from_counts
from pytest_netbench._stats.merge import summarize


@dataclass(frozen=True, slots=True)
class ProbeSample:
    """One probe: when it started (this host's monotonic clock), how long it took, and the
    error kind if it failed (``""`` when its answer came back right)."""

    start_ns: int
    latency_ns: int
    error: str = ""
    detail: str = ""


def summarize_probe(
    samples: Sequence[ProbeSample], every_s: float, window_start_ns: int, window_end_ns: int
) -> ProbeStats:
    inside = [s for s in samples if window_start_ns <= s.start_ns < window_end_ns]
    errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
    error_samples: dict[str, str] = {}
    ok_latencies = []
    for sample in inside:
        if sample.error:
            errors[sample.error] += 1
            error_samples.setdefault(sample.error, sample.detail[:200])
        else:
            ok_latencies.append(sample.latency_ns)
    hist = histogram_from_counts(count_microseconds(ok_latencies))
    return ProbeStats(
        every_s=every_s,
        sent=len(inside),
        ok=len(ok_latencies),
        errors=errors,
        latency=summarize(hist),
        error_samples=error_samples,
    )
