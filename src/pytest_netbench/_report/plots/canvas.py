"""The drawing surface every picture shares: matplotlib, imported lazily, an Agg canvas
without pyplot, one look for all the figures, and saving a PNG.

Drawing without pyplot leaves nothing global behind (no backend switched, no figure left
open) in the process that runs the tests. Without matplotlib, :class:`PlotUnavailable`
says how to install it.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_netbench._errors import NetbenchError

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
# matplotlib's tab10, blue and red first: the first two lines differ most.
PALETTE: tuple[str, ...] = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#17becf",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
)


class PlotUnavailable(NetbenchError):
    """matplotlib is not installed."""


MISSING = (
    "plots need matplotlib, which is not installed; "
    "run `pip install 'pytest-netbench[plot]'` (or `pip install matplotlib`)"
)


def matplotlib_installed() -> bool:
    """Whether matplotlib can be found, without importing it (cheap enough for start-up)."""
    return importlib.util.find_spec("matplotlib") is not None


def require_matplotlib() -> None:
    """Raise :class:`PlotUnavailable` now, before a load runs, if pictures cannot be drawn."""
    try:
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise PlotUnavailable(MISSING) from None


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches on its own Agg canvas."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def style_axes(axes: Axes, *, xlabel: str, ylabel: str, title: str = "") -> None:
    """Labels (with their units) and a light grid, the same on every picture."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if title:
        axes.set_title(title, fontsize="medium")
    axes.grid(True, alpha=0.3)


def thousands(axes: Axes) -> None:
    """Tick labels of a rate axis as 12,000 rather than 12000 or 1.2e4 (once its limits are
    set: below 1,000 the default ticks, which may be fractions, stay)."""
    from matplotlib.ticker import StrMethodFormatter

    if axes.get_ylim()[1] >= 1000:
        axes.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def number(value: float) -> str:
    """A figure for a legend: 53,880 / 612 / 5.1 / 0.139."""
    if not math.isfinite(value):
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def from_zero(axes: Axes, values: Iterable[float]) -> None:
    """A linear y axis from zero, with room above the highest value."""
    finite = [v for v in values if math.isfinite(v)]
    top = max(finite, default=0.0)
    axes.set_ylim(0.0, top * 1.08 if top > 0 else 1.0)


def wide_range(values: Iterable[float], ratio: float = 30.0) -> bool:
    """Whether positive ``values`` span more than ``ratio`` (read better on a log axis)."""
    positive = [v for v in values if math.isfinite(v) and v > 0]
    return bool(positive) and max(positive) / min(positive) > ratio


def solid_patch(colour: str, label: str) -> Artist:
    """A legend entry for a series of bars in one colour (whatever its bars' hatching)."""
    from matplotlib.patches import Patch

    return Patch(facecolor=colour, edgecolor="black", linewidth=0.6, label=label)


def hatched_patch(label: str) -> Artist:
    """A legend entry for hatched (invalid) bars."""
    from matplotlib.patches import Patch

    return Patch(facecolor="white", edgecolor="black", hatch="//", label=label)


def legend_columns(labels: Iterable[str], figure_width_in: float, most: int = 6) -> int:
    """How many columns a figure-wide legend of these labels can have without running
    past the figure's edges (long parametrised test names did: the all-sweeps picture
    cut its first and last columns off)."""
    texts = list(labels)
    if not texts:
        return 1
    # A "small" legend font is about 6.5 px a character at 100 dpi; a handle and the gaps
    # around it take about 60 px.
    column_px = 6.5 * max(len(t) for t in texts) + 60
    fits = int(figure_width_in * DPI * 0.96 // column_px)
    return max(1, min(len(texts), most, fits))


def save(figure: Figure, path: str | os.PathLike[str]) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # "tight" grows the image to whatever was drawn outside the axes, so a long legend or
    # title is never cut off at the edge.
    figure.savefig(target, format="png", bbox_inches="tight", pad_inches=0.1)
    return target
