"""Experiments as plain text, printed as they go: a sweep's table one row per step (as
autobench's is), a capacity search one line per step and then its answer, a cold start
its fine timeline and what it shows.

Each piece is a function returning lines, so the CLI prints a row the moment its step is
done and :func:`format_sweep` / :func:`format_capacity` print a stored result whole. Rows
fit 80 columns; free text (why a capacity step failed, why a sweep step is invalid) goes
on indented lines under its row, wrapped.
"""

from __future__ import annotations

import math
import textwrap

from pytest_netbench._experiment.capacity import CapacityResult, CapacityStep
from pytest_netbench._experiment.cold_start import ColdStartResult
from pytest_netbench._experiment.sweep import SweepResult, SweepStep
from pytest_netbench._model import ERROR_KINDS, LoadResult, LoadSpec
from pytest_netbench._report.cells import format_ms
from pytest_netbench._report.targets import describe_target

_WIDTH = 80
_NOTE = "      "  # the indent of the notes under a row


def load_description(spec: LoadSpec, per: str) -> str:
    """``5 s per step, 10 connections (pool up to 1,024), uniform arrivals``."""
    if spec.duration_s is not None:
        length = f"{spec.duration_s:g} s"
    else:
        length = f"{spec.requests:,} requests"
    parts = [f"{length} per {per}", f"{spec.connections} connections"]
    pool = spec.max_connections or max(spec.connections, 1024)
    if pool > spec.connections:
        parts[-1] += f" (pool up to {pool:,})"
    parts.append(f"{spec.arrival} arrivals")
    if spec.warmup_s:
        parts.append(f"{spec.warmup_s:g} s warm-up excluded")
    if spec.workers > 1:
        parts.append(f"{spec.workers} workers")
    if spec.kind == "http" and not spec.keepalive:
        parts.append("new connection per request")
    return ", ".join(parts)


# -- sweep ---------------------------------------------------------------------------------
# Column widths: demanded 8, achieved 9, sd 6 | corrected 7 7 7 | uncorrected 8 7 7 |
# errors 7, valid 6: 79 columns.
_SWEEP_HEAD = (
    f"{'rate, req/s':^31}{'corrected ms':^18} {'uncorrected ms':^18}".rstrip(),
    f"{'demanded':>8}{'sent':>8}{'answered':>9}{'±sd':>5}{'p50':>6}{'p90':>6}{'p99':>6}"
    f"{'p50':>7}{'p90':>6}{'p99':>6}{'errors':>7}{'valid':>6}",
)


def sweep_heading(spec: LoadSpec, rates: tuple[float, ...]) -> list[str]:
    """What is swept and how, and the table's column heads."""
    span = f"{_rate(rates[0])} to {_rate(rates[-1])} req/s" if len(rates) > 1 else ""
    count = f"{len(rates)} rates" if len(rates) > 1 else f"1 rate, {_rate(rates[0])} req/s"
    lines = _heading(f"Sweep {describe_target(spec)}: {count}" + (f" from {span}" if span else ""))
    lines += _wrap(load_description(spec, "step"), "  ")
    if spec.mix:
        lines += _wrap(_SWEEP_MIX_NOTE, "  ")
    return [*lines, "", *_SWEEP_HEAD]


def sweep_row(step: SweepStep) -> list[str]:
    """One step: the row, then notes for its errors, invalidity, reruns, interruption."""
    r = step.result
    unc = r.uncorrected
    corrected = [format_ms(v) for v in (r.p50_ms, r.p90_ms, r.p99_ms)]
    uncorrected = [
        format_ms(getattr(unc, name) if unc is not None else math.nan)
        for name in ("p50_ms", "p90_ms", "p99_ms")
    ]
    valid = "cut" if r.interrupted else ("yes" if r.valid else "NO")
    row = (
        f"{_rate(step.rate):>8}{_achieved(step.achieved_rate):>8}"
        f"{_achieved(step.answered_rate):>9}{_spread(r.rps_stdev):>5}"
        f"{corrected[0]:>6}{corrected[1]:>6}{corrected[2]:>6}"
        f"{uncorrected[0]:>7}{uncorrected[1]:>6}{uncorrected[2]:>6}"
        f"{_count(r.errors_total):>7}{valid:>6}"
    )
    return [row, *_request_rows(r), *_result_notes(r, step.attempts.discarded)]


_SWEEP_MIX_NOTE = (
    "under each rate, a row per request of the mix: its answered req/s, latency (from"
    " when each request was due) and errors"
)
_KIND_NAME = 16  # a kind's name fills the demanded and sent columns, indented by 2


def _request_rows(result: LoadResult) -> list[str]:
    """A mix's kinds at one step, in the step row's columns: the answered rate, the
    corrected percentiles and the errors (each kind has one latency, from when its
    requests were due, so the uncorrected columns stay blank)."""
    lines = []
    for name, kind in result.by_request.items():
        shown = name if len(name) <= _KIND_NAME - 2 else name[: _KIND_NAME - 3] + "~"
        corrected = [format_ms(getattr(kind.latency, f)) for f in ("p50_ms", "p90_ms", "p99_ms")]
        line = (
            f"  {shown:<{_KIND_NAME - 2}}{_achieved(kind.rps):>9}{'':>5}"
            f"{corrected[0]:>6}{corrected[1]:>6}{corrected[2]:>6}{'':>19}"
            f"{_count(kind.errors_total):>7}"
        )
        lines.append(line.rstrip())
    return lines


def sweep_closing(result: SweepResult) -> list[str]:
    """The line after the table: why it stopped before the last rate, if it did."""
    if result.interrupted:
        reason = result.stop_reason
        interrupted = reason.startswith("interrupted")
        text = reason[:1].upper() + reason[1:] if interrupted else f"Interrupted: {reason}"
        return ["", *_wrap(f"{text}.", "")]
    if result.stopped_early:
        return ["", *_wrap(f"Stopped past saturation: {result.stop_reason}.", "")]
    return []


def format_sweep(result: SweepResult) -> str:
    """A whole sweep (from a stored result, say)."""
    lines: list[str] = []
    if result.steps and result.steps[0].result.spec is not None:
        lines += sweep_heading(result.steps[0].result.spec, result.rates)
    else:
        lines += list(_SWEEP_HEAD)
    for step in result.steps:
        lines += sweep_row(step)
    lines += sweep_closing(result)
    return "\n".join(lines) + "\n"


def _result_notes(result: LoadResult, discarded: tuple[LoadResult, ...]) -> list[str]:
    notes: list[str] = []
    if result.errors_total:
        kinds = ", ".join(f"{result.errors[k]:,} {k}" for k in ERROR_KINDS if result.errors.get(k))
        notes.append(f"errors: {kinds}")
    if result.interrupted:
        notes.append(f"interrupted after {result.duration_s:.1f} s: figures for that time only")
    if not result.valid:
        notes += [f"invalid: {reason}" for reason in result.invalid_reasons]
    if discarded:
        notes.append(_discarded_note(discarded))
    return [line for note in notes for line in _wrap(note, _NOTE)]


def _discarded_note(discarded: tuple[LoadResult, ...]) -> str:
    causes = sorted({c for d in discarded for c in d.invalid_causes})
    return (
        f"{len(discarded)} earlier run(s) discarded: the generator fell short ({', '.join(causes)})"
    )


# -- capacity ------------------------------------------------------------------------------
_CAPACITY_HEAD = f"{'#':>3}  {'phase':<9}{'rate/s':>9}  {'verdict':<9}why"
# A search over connections (``over="connections"``): its steps' column.
_CONNECTIONS_HEAD = f"{'#':>3}  {'phase':<9}{'conns':>9}  {'verdict':<9}why"


def capacity_heading(spec: LoadSpec, slo: str, precision: float, over: str = "rate") -> list[str]:
    lines = _heading(f"Capacity of {describe_target(spec)}")
    if over == "connections":
        lines += _wrap(
            f"the most connections at once (closed loop) meeting {slo!r}, to within"
            f" {precision:.0%} or one connection",
            "  ",
        )
        length = f"{spec.duration_s:g} s" if spec.duration_s is not None else "a run"
        each = f" of {spec.streams} streams" if spec.protocol == "h2" and spec.streams > 1 else ""
        lines += _wrap(f"{length} per step, closed loop, a step's connections{each} at once", "  ")
        return [*lines, "", _CONNECTIONS_HEAD]
    lines += _wrap(f"the highest rate meeting {slo!r}, to within {precision:.0%}", "  ")
    lines += _wrap(load_description(spec, "step"), "  ")
    return [*lines, "", _CAPACITY_HEAD]


def capacity_step_lines(number: int, step: CapacityStep, unit: str = "req/s") -> list[str]:
    """One step: number, phase, rate (or connections: ``unit``), verdict, and why (wrapped
    under it)."""
    rate = "-" if step.phase == "estimate" else _exact_rate(step.rate)
    verdict = "-" if step.verdict == "estimate" else step.verdict
    why = _checks_text(step) if step.verdict in ("pass", "fail") else step.why
    if step.decision is not None and step.phase == "repeat":
        why = f"{why} => {_exact_rate(step.rate)} {unit} counts as {step.decision}"
    head = f"{number:>3}  {step.phase:<9}{rate:>9}  {verdict:<9}"
    first, *rest = textwrap.wrap(why, _WIDTH - len(head), break_on_hyphens=False) or [""]
    indent = " " * len(head)
    lines = [head + first, *(indent + line for line in rest)]
    if step.attempts.discarded:
        lines += _wrap(_discarded_note(step.attempts.discarded), indent)
    return lines


def _checks_text(step: CapacityStep) -> str:
    """The SLO's terms as k6 prints thresholds: ``p99_ms 32.8 < 50`` when met, and only
    the failed ones, ``p99_ms 969.2, not < 50``, when not. A step whose result was
    invalid for a server-side cause says that instead."""
    if not step.result.valid or not step.checks:
        return step.why
    failed = [c for c in step.checks if not c.passed]
    parts = []
    for check in failed or step.checks:
        value = "n/a" if math.isnan(check.value) else f"{check.value:,.4g}"
        bound = f"{check.term.op} {check.term.bound:g}"
        parts.append(
            f"{check.term.metric} {value}" + (f" {bound}" if check.passed else f", not {bound}")
        )
    return "; ".join(parts)


def capacity_answer(result: CapacityResult) -> list[str]:
    """The answer, or "unknown" and why."""
    if result.rate is not None:
        head = f"Capacity: {_exact_rate(result.rate)} {result.unit}"
        detail = result.reason
    else:
        head = "Capacity: unknown" if not result.interrupted else "Capacity: unknown (interrupted)"
        detail = result.reason.removeprefix("unknown: ")
        if result.at_least is not None:
            head += f" (at least {_exact_rate(result.at_least)} {result.unit})"
    return ["", head, *_wrap(detail, "  "), *_answer_requests(result)]


def answer_step(result: CapacityResult) -> CapacityStep | None:
    """The last passing run at the answer (or at the highest rate verified, when the
    answer is unknown): the step whose figures the answer stands on."""
    rate = result.rate if result.rate is not None else result.at_least
    passed = [s for s in result.steps if s.rate == rate and s.verdict == "pass"]
    return passed[-1] if passed else None


def _answer_requests(result: CapacityResult) -> list[str]:
    """A mix's kinds at the answer: each one's p50, p99 and errors, so the endpoint that
    set the capacity (and how far the others were from their bounds) is in sight."""
    step = answer_step(result)
    if step is None or not step.result.by_request:
        return []
    kinds = "; ".join(
        f"{name} p50 {format_ms(kind.latency.p50_ms)} ms, p99 {format_ms(kind.latency.p99_ms)}"
        f" ms, {_count(kind.errors_total)} errors"
        for name, kind in step.result.by_request.items()
    )
    return _wrap(f"Per request at {_exact_rate(step.rate)} {result.unit}: {kinds}", "  ")


def format_capacity(result: CapacityResult) -> str:
    """A whole capacity search (from a stored result, say)."""
    lines: list[str] = []
    spec = result.all_steps[0].result.spec if result.all_steps else None
    if spec is not None:
        lines += capacity_heading(spec, result.slo, result.precision, result.over)
    else:
        lines.append(_CAPACITY_HEAD if result.over == "rate" else _CONNECTIONS_HEAD)
    for number, step in enumerate(result.all_steps, 1):
        lines += capacity_step_lines(number, step, result.unit)
    lines += capacity_answer(result)
    return "\n".join(lines) + "\n"


# -- cold start ----------------------------------------------------------------------------
_COLD_BAR = 20
_COLD_HEAD = (
    f"{'from':>8}{'ok':>8}{'req/s':>9}  {'req/s, of the fastest row':<{_COLD_BAR + 6}}"
    f"{'p50 ms':>8}{'p99 ms':>8}{'errors':>7}"
)


def cold_start_heading(spec: LoadSpec, resolution_s: float) -> list[str]:
    length = f"{spec.duration_s:g} s" if spec.duration_s is not None else "a run"
    lines = _heading(f"Cold start {describe_target(spec)}")
    lines += _wrap(
        f"{length} from the very first request (no warm-up), {spec.connections} connections,"
        f" a timeline row every {resolution_s * 1000:g} ms",
        "  ",
    )
    return [*lines, ""]


def cold_start_lines(result: ColdStartResult) -> list[str]:
    """The timeline, a row per step of ``resolution_s``, then the figures read from it."""
    rows = result.rows
    fastest = max((row.rate for row in rows), default=0.0)
    lines = [_COLD_HEAD]
    for row in rows:
        share = row.rate / fastest if fastest > 0 else 0.0
        bar = "#" * round(share * _COLD_BAR)
        lines.append(
            f"{row.start_s:>6.1f} s{_count(row.ok):>8}{row.rate:>9,.0f}  "
            f"{bar:<{_COLD_BAR}} {share:>4.0%} {format_ms(row.p50_ms):>8}"
            f"{format_ms(row.p99_ms):>8}{_count(row.errors):>7}"
        )
    lines.append("")
    lines += _cold_figures(result)
    kept = result.result
    notes = _result_notes(kept, result.attempts.discarded)
    return lines + (["", *notes] if notes else [])


def _cold_figures(result: ColdStartResult) -> list[str]:
    steady = result.steady_rate
    if result.result.ok == 0:
        return ["No request succeeded: there is no rate to read."]
    if not steady > 0:
        return ["No request succeeded in the last half of the run: there is no steady rate."]
    ratio = result.first_second_ratio
    lines = [
        f"First second: {_rate(result.first_second_rate)} req/s, {ratio:.2f} of the steady"
        f" {_rate(steady)} req/s (the median row of the last half)",
    ]
    tolerance = f"{result.settle_tolerance:.0%}"
    if math.isfinite(result.settle_s):
        lines.append(
            f"Settled: req/s within {tolerance} of steady from {result.settle_s:.1f} s on"
            f" (judged over {result.settle_window_s:g} s windows)"
        )
    else:
        lines.append(f"Not settled: the last row's req/s is more than {tolerance} from steady")
    p50 = f"Latency: p50 {format_ms(result.first_second_p50_ms)} ms in the first second,"
    p50 += f" {format_ms(result.steady_p50_ms)} ms steady"
    if math.isfinite(result.p50_settle_s):
        p50 += f", within {tolerance} of it from {result.p50_settle_s:.1f} s on"
    lines.append(p50)
    return [line for text in lines for line in _wrap(text, "")]


def format_cold_start(result: ColdStartResult) -> str:
    """A whole cold start (from a stored result, say)."""
    spec = result.result.spec
    heading = cold_start_heading(spec, result.resolution_s) if spec is not None else []
    return "\n".join([*heading, *cold_start_lines(result)]) + "\n"


def _rate(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.1f}"


def _exact_rate(value: float) -> str:
    """A step's rate as the search chose it (five significant digits), as its reasons say."""
    return f"{value:,.6g}"


def _achieved(value: float) -> str:
    """One decimal below 10,000 req/s, so a small shortfall shows."""
    return f"{value:,.1f}" if value < 10_000 else f"{value:,.0f}"


def _spread(value: float) -> str:
    """At most 4 characters (the column is 5 wide)."""
    if value < 100:
        return f"{value:.1f}"
    return f"{value:.0f}" if value < 1000 else f"{value / 1000:.1f}k"


def _count(value: int) -> str:
    return f"{value:,}" if value < 1_000_000 else f"{value / 1e6:.1f}M"


def _heading(text: str) -> list[str]:
    """A heading naming a load's target: wrapped (a mix names its kinds), a URL kept whole."""
    return textwrap.wrap(
        text, _WIDTH, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False
    )


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(
        text, _WIDTH, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    )
