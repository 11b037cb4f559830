"""Repeat a measurement, then print median and spread the same way in every benchmark."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def number(value: float) -> str:
    """Three significant digits; large counts in full with thousands separators."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def median_spread(values: Sequence[float]) -> str:
    """``median [min .. max]``."""
    if not values:
        return "n/a"
    return f"{number(statistics.median(values))} [{number(min(values))} .. {number(max(values))}]"


def row(label: str, values: Sequence[float], unit: str = "") -> str:
    return f"  {label:<44} {median_spread(values)} {unit}".rstrip()


def header(title: str, detail: str) -> str:
    return f"\n== {title}\n   {detail}\n   figures: median [min .. max] over trials"
