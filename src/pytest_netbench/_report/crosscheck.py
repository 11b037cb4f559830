"""A crosscheck as text: netbench's figures and the second tool's side by side, and their
ratio, under a heading that says what load both ran and how the other tool was run."""

from __future__ import annotations

import math
import shlex
import textwrap

from pytest_netbench._experiment.crosscheck import METRIC_LABELS, STEADY_DRIFT, CrosscheckResult
from pytest_netbench._model import LoadSpec

_WIDTH = 80


def crosscheck_lines(result: CrosscheckResult) -> list[str]:
    """The whole report: heading, table, how each tool ran, and any warning."""
    tool = result.tool
    spec = result.netbench.spec
    lines = [f"Crosscheck with {tool}: {_load(spec) if spec is not None else result.netbench.url}"]
    lines.append("")
    ratio = f"netbench/{tool}"
    lines.append(f"{'':<8}{'netbench':>12}{tool:>12}{ratio:>{max(14, len(ratio) + 2)}}")
    for metric in result.metrics:
        ours, theirs = result.netbench_value(metric), result.other_value(metric)
        shown_ratio = "" if metric == "errors" else _ratio(result.ratio(metric))
        lines.append(
            f"{METRIC_LABELS[metric]:<8}{_figure(metric, ours):>12}{_figure(metric, theirs):>12}"
            f"{shown_ratio:>{max(14, len(ratio) + 2)}}".rstrip()
        )
    lines.append(f"(netbench/{tool} above 1: netbench's figure is the higher)")
    if "p99_ms" not in result.metrics:
        lines.append(f"({tool} prints no percentiles: its mean, sd and max are compared)")
    lines += _order_lines(result)
    lines.append("")
    other = result.other
    lines.append(
        f"{other.version or tool}: {other.requests:,} requests in {other.duration_s:.2f} s"
    )
    # Never wrapped, so it can be copied and run again by hand.
    lines.append(f"  ran: {shlex.join(other.command)}")
    netbench = result.netbench
    notes = []
    if netbench.in_flight:
        notes.append(f"{netbench.in_flight:,} in flight at the end")
    if result.attempts.runs > 1:
        spoiled = result.attempts.runs - 1
        notes.append(f"run {result.attempts.runs} times: the generator spoiled the first {spoiled}")
    lines += _wrapped(
        f"netbench: {netbench.ok:,} ok of {netbench.sent:,} sent in {netbench.duration_s:.2f} s"
        + (f" ({'; '.join(notes)})" if notes else "")
    )
    if not netbench.valid:
        lines += _wrapped("netbench's run is INVALID: " + "; ".join(netbench.invalid_reasons))
    again = result.again
    if again is not None and not again.valid:
        lines += _wrapped(
            f"netbench's run after {tool}'s is INVALID: " + "; ".join(again.invalid_reasons)
        )
    if other.errors_total:
        kinds = ", ".join(f"{k} {n:,}" for k, n in other.errors.items() if n)
        lines += _wrapped(f"{tool}'s errors: {kinds}")
    if netbench.errors_total:
        kinds = ", ".join(f"{k} {n:,}" for k, n in netbench.errors.items() if n)
        lines += _wrapped(f"netbench's errors: {kinds}")
    return lines


def _order_lines(result: CrosscheckResult) -> list[str]:
    """How both tools met the same server: the warm-up, netbench's runs around the other
    tool's, and the mark of a server that changed meanwhile."""
    tool = result.tool
    lines: list[str] = []
    if result.warmup_s:
        lines.append(f"(warmed first: {result.warmup_s:g} s of the same load, not measured)")
    again = result.again
    if again is None:
        return lines
    before, after = result.netbench.rps, again.rps
    drift = "" if math.isnan(result.drift) else f", {result.drift:+.0%}"
    lines += _wrapped(
        f"(netbench ran before and after {tool}: {before:,.0f} then {after:,.0f} req/s{drift};"
        " its column is the mean of the two)"
    )
    if not result.steady:
        lines += _wrapped(
            f"UNSTEADY: netbench's runs before and after {tool}'s differ by"
            f" {abs(result.drift):.0%} in req/s (more than {STEADY_DRIFT:.0%}): the server"
            " changed while it was measured (a JIT or a cache still warming, or other work on"
            " the machine), so the ratios compare two different servers: warm it longer"
            " (--warmup), pin it to its own cores, and run again"
        )
    return lines


def format_crosscheck(result: CrosscheckResult) -> str:
    return "\n".join(crosscheck_lines(result)) + "\n"


def _load(spec: LoadSpec) -> str:
    length = (
        f"{spec.duration_s:g} s" if spec.duration_s is not None else f"{spec.requests:,} requests"
    )
    parts = [f"GET {spec.url}", f"{spec.connections} connections", length]
    if spec.protocol == "h2":
        parts.append(f"HTTP/2, {spec.streams} streams/connection")
    else:
        parts.append("keep-alive" if spec.keepalive else "new connection per request")
    if spec.workers > 1:
        parts.append(f"{spec.workers} workers/threads")
    return ", ".join(parts)


def _figure(metric: str, value: float) -> str:
    if math.isnan(value):
        return "-"
    if metric == "rps":
        return f"{value:,.0f}"
    if metric == "errors":
        return f"{value:,.0f}"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _ratio(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(
        text, _WIDTH, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
    )
