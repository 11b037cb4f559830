"""Thresholds: how much worse a metric may get, parsed from ``p99_ms:10%,rps:5%``.

Which way is worse comes from the metric (latency, errors, CPU: higher is worse; rps:
lower is worse). Like pytest-benchmark's checks, each threshold is a small object with
``.fails(current, baseline)``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pytest_netbench._errors import SpecError
from pytest_netbench._metrics import check_gate_metric, higher_is_better
from pytest_netbench._public import publish

_THRESHOLD_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:\s*([0-9]*\.?[0-9]+)\s*(%|ms)?\s*$")


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
        amount = f"{self.limit * 100:g}%" if self.relative else f"{self.limit:g}"
        way = "rise" if self.higher_is_worse else "drop"
        return f"{self.metric} {way} > {amount}"


def parse_thresholds(text: str) -> list[Threshold]:
    """``"p99_ms:10%,rps:5%,errors_total:0"`` -> thresholds. A number with ``%`` is relative
    to the baseline; a bare number (or ``ms`` for latency metrics) is an absolute amount."""
    thresholds: list[Threshold] = []
    for part in text.split(","):
        if not part.strip():
            continue
        match = _THRESHOLD_RE.match(part)
        if not match:
            raise SpecError(
                f"cannot read threshold {part.strip()!r}; write METRIC:LIMIT such as "
                "p99_ms:10% (relative), rps:5% or errors_total:0 (absolute)"
            )
        metric, number, unit = match.groups()
        check_gate_metric(metric)
        if unit == "ms" and not metric.endswith("_ms"):
            raise SpecError(f"threshold {part.strip()!r}: 'ms' only fits latency metrics (*_ms)")
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


publish(globals())
