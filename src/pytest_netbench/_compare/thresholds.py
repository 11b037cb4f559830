"""Thresholds: how much worse a metric may get, parsed from ``p99_ms:10%,rps:5%``.

Which way is worse comes from the metric (latency, errors, CPU: higher is worse; rps:
lower is worse). Like pytest-benchmark's checks, each threshold is a small object with
``.fails(current, baseline)``.

A limit always says its unit, so ``p99_ms:10`` cannot silently mean 10 ms to one reader
and 10 % to another: ``%`` of the baseline (any metric), ``ms`` for a figure in
milliseconds, ``s`` for one in seconds; a bare number only for a count (``errors_total:0``,
any increase), which has no unit to write.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pytest_netbench._compare.metrics import (
    METRIC_PATTERN,
    check_gate_metric,
    higher_is_better,
    is_count,
)
from pytest_netbench._errors import SpecError
from pytest_netbench._public import publish

_THRESHOLD_RE = re.compile(rf"^\s*({METRIC_PATTERN})\s*:\s*([0-9]*\.?[0-9]+)\s*(%|ms|s)?\s*$")


def metric_unit(metric: str) -> str:
    """The unit an absolute limit on ``metric`` is written in: ``ms`` (``p99_ms``,
    ``server.cpu_ms_per_request``), ``s`` (``server.cpu_s``, ``settle_s``), or "" (a count,
    a rate, a ratio)."""
    last = metric.rsplit(".", 1)[-1]
    if last.endswith("_ms") or "_ms_per_" in last:
        return "ms"
    if last.endswith("_s") and not last.endswith("_per_s"):
        return "s"
    return ""


@dataclass(frozen=True, slots=True)
class Threshold:
    """How much worse ``metric`` may get: a fraction (``relative``) or an absolute amount."""

    metric: str
    limit: float
    relative: bool = True

    @property
    def higher_is_worse(self) -> bool:
        return not higher_is_better(self.metric)

    def worsening(self, current: float, baseline: float) -> float:
        """How much worse current is than baseline, in the threshold's unit (negative when
        better): a fraction of the baseline for relative thresholds."""
        delta = current - baseline if self.higher_is_worse else baseline - current
        if not self.relative:
            return delta
        if baseline == 0:
            return 0.0 if delta == 0 else math.copysign(math.inf, delta)
        return delta / abs(baseline)

    def fails(self, current: float, baseline: float) -> bool:
        """True when current is worse than baseline by more than the limit."""
        if math.isnan(current) or math.isnan(baseline):
            return False
        return self.worsening(current, baseline) > self.limit

    def improves(self, current: float, baseline: float) -> bool:
        if math.isnan(current) or math.isnan(baseline):
            return False
        return -self.worsening(current, baseline) > self.limit

    def describe(self) -> str:
        unit = "%" if self.relative else metric_unit(self.metric)
        amount = f"{self.limit * 100:g}%" if self.relative else f"{self.limit:g}{unit}"
        way = "rise" if self.higher_is_worse else "drop"
        return f"{self.metric} {way} > {amount}"


def parse_thresholds(text: str) -> list[Threshold]:
    """``"p99_ms:10%,p50_ms:2ms,errors_total:0"`` -> thresholds. A number with ``%`` is
    relative to the baseline; with ``ms`` or ``s`` (for a figure in that unit), or bare for
    a count, an absolute amount. A limit without the unit its metric needs is refused."""
    thresholds: list[Threshold] = []
    for part in text.split(","):
        if not part.strip():
            continue
        match = _THRESHOLD_RE.match(part)
        if not match:
            raise SpecError(
                f"cannot read threshold {part.strip()!r}; write METRIC:LIMIT such as "
                "p99_ms:10% (relative), p50_ms:2ms or errors_total:0 (absolute)"
            )
        metric, number, unit = match.groups()
        check_gate_metric(metric)
        _check_unit(part.strip(), metric, number, unit or "")
        limit = float(number)
        thresholds.append(
            Threshold(metric, limit / 100 if unit == "%" else limit, relative=unit == "%")
        )
    if not thresholds:
        raise SpecError("no thresholds given; write e.g. p99_ms:10%,rps:5%")
    seen = [t.metric for t in thresholds]
    duplicates = sorted({m for m in seen if seen.count(m) > 1})
    if duplicates:
        raise SpecError(f"threshold given twice for {', '.join(duplicates)}; give each once")
    return thresholds


def _check_unit(written: str, metric: str, number: str, unit: str) -> None:
    """The unit must be one the metric has: % always, its own for an absolute limit, none
    only for a count."""
    own = metric_unit(metric)
    if unit in ("%", own) and (unit or is_count(metric)):
        return
    relative = f"{metric}:{number}% ({number} % of the baseline)"
    if unit:
        meaning = {"ms": "milliseconds", "s": "seconds"}[unit]
        what = f"'{unit}' fits only figures in {meaning}; "
    else:
        what = "a limit needs its unit: "
    if own:
        raise SpecError(
            f"threshold {written!r}: {what}write {relative} or {metric}:{number}{own}"
            f" ({number} {own} more)"
        )
    counts = "" if unit else " (a bare number is for counts such as errors_total:0)"
    raise SpecError(
        f"threshold {written!r}: {what}write {relative}; {metric} takes a relative limit{counts}"
    )


publish(globals())
