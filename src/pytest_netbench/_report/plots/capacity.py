"""A capacity search as the steps it ran: one panel per term of the SLO (p99_ms < 50,
error_rate <= 0.001 ...), each step a point at its rate with its value for that term,
green where the term held and red where it failed, numbered in the order they ran. The
bound is a dashed line; the answer (or the highest rate known to meet the SLO) a dotted
vertical line on every panel.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_netbench._experiment.capacity import CapacityResult
from pytest_netbench._report.plots.canvas import new_figure, number, style_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PASSED, FAILED = "#2ca02c", "#d62728"


def capacity_figure(result: CapacityResult, *, title: str) -> Figure:
    steps = result.steps  # the open-loop steps, in the order they ran
    terms = list(dict.fromkeys(check.term for step in steps for check in step.checks))
    figure = new_figure(max(6.0, 4.5 * max(1, len(terms))), 4.8)
    panels = figure.subplots(1, max(1, len(terms)), squeeze=False)[0]
    answer = result.rate if result.rate is not None else result.at_least
    for axes, term in zip(panels, terms, strict=False):
        for order, step in enumerate(steps, start=1):
            check = next((c for c in step.checks if c.term == term), None)
            if check is None or math.isnan(check.value):
                continue
            axes.scatter(
                [step.rate], [check.value], color=PASSED if check.passed else FAILED, zorder=3
            )
            axes.annotate(
                str(order), (step.rate, check.value), textcoords="offset points",
                xytext=(4, 4), fontsize="x-small",
            )  # fmt: skip
        axes.axhline(term.bound, color="grey", linestyle="--", label=f"bound: {term.text}")
        xlabel = "step rate (req/s)" if result.over == "rate" else "step connections"
        style_axes(axes, xlabel=xlabel, ylabel=_axis_label(term.metric))
        axes.set_ylim(bottom=0.0)
        axes.set_xlim(left=0.0)
    for axes in panels:
        if answer is not None:
            label = "capacity" if result.rate is not None else "at least"
            axes.axvline(
                answer,
                color="black",
                linestyle=":",
                label=f"{label} {number(answer)} {result.unit}",
            )
        if axes.get_legend_handles_labels()[0]:
            axes.scatter([], [], color=PASSED, label="met")
            axes.scatter([], [], color=FAILED, label="failed")
            axes.legend(fontsize="small", loc="upper left")
    heading = f"{title}\nSLO {result.slo}: "
    if result.rate is not None:
        heading += f"capacity {number(result.rate)} {result.unit}"
    else:
        heading += "unknown"
    figure.suptitle(heading)
    if not terms:
        panels[0].text(0.5, 0.5, "no step ran", transform=panels[0].transAxes, ha="center")
    return figure


def _axis_label(metric: str) -> str:
    if metric.endswith("_ms"):
        return f"{metric} (ms)"
    if metric == "error_rate":
        return "error_rate (errors per request sent)"
    if metric == "rps":
        return "rps (ok responses/s)"
    return metric
