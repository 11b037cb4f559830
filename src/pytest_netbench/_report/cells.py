"""How the text reports write a number: latencies in ms, byte counts, counts. One place,
so every table (the load's, its shares', the experiments', the HTML tables) reads alike."""

from __future__ import annotations

import math

from pytest_netbench._model import LoadResult


def rate_unit(result: LoadResult) -> str:
    """What a result's rate counts a second: ``msg/s`` for WebSocket message round trips,
    ``pushes/s`` for a listen load's pushes, ``req/s`` for anything else."""
    spec = result.spec
    if spec is not None and spec.kind == "ws":
        return "pushes/s" if spec.listen else "msg/s"
    return "msg/s" if result.url.startswith(("ws://", "wss://")) else "req/s"


def format_ms(value: float) -> str:
    """A latency in ms in at most 7 characters, with about 3-4 significant digits."""
    if math.isnan(value):
        return "-"
    if value < 10:
        return f"{value:.3f}"
    if value < 100:
        return f"{value:.2f}"
    if value < 1000:
        return f"{value:.1f}"
    if value < 100_000:
        return f"{value:.0f}"
    return f"{value / 1000:.0f}s"


def format_bytes(count: float) -> str:
    """Bytes with a binary unit, e.g. ``12.3 MiB``."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} TiB"  # pragma: no cover - loop always returns


def format_count(value: float) -> str:
    """A count with thousands separators (``123,456``) or one decimal below 100."""
    if math.isnan(value):
        return "-"
    if value < 100 and value != int(value):
        return f"{value:.1f}"
    return f"{value:,.0f}"
