"""Repeat a measurement, then print median and spread the same way in every benchmark."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def number(value: float, digits: int = 3) -> str:
    """``digits`` significant digits; large counts in full with thousands separators."""
    if abs(value) >= 10**digits:
        return f"{value:,.0f}"
    return f"{value:#.{digits}g}".rstrip(".")  # '#' keeps 1.000 from collapsing to 1


def median_spread(values: Sequence[float], digits: int = 3) -> str:
    """``median [min .. max]``."""
    if not values:
        return "n/a"
    mid, low, high = statistics.median(values), min(values), max(values)
    return f"{number(mid, digits)} [{number(low, digits)} .. {number(high, digits)}]"


def row(label: str, values: Sequence[float], unit: str = "", digits: int = 3) -> str:
    return f"  {label:<44} {median_spread(values, digits)} {unit}".rstrip()


def header(title: str, detail: str) -> str:
    return f"\n== {title}\n   {detail}\n   figures: median [min .. max] over trials"
