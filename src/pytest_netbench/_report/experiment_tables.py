"""Tables of experiments, one per test function and kind, built from the stored records.

A sweep gets a row per step (the demanded rate as a column, then what was achieved, the
latency, errors and whether the step is valid); a capacity search a row per
parametrisation (the answer, how many steps and loads it took); any other experiment a
row per parametrisation with its scalar figures. Rows start with the parameters that
vary between the test's records, as matrix rows do. The model (:class:`ExperimentTable`)
is separate from its renderings, so the terminal and Markdown show the same cells.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_netbench._compare.records import ExperimentRecord
from pytest_netbench._experiment.per_request import stored_step_requests
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.matrix import abbreviate, effective_params

_TITLES: Mapping[str, str] = {
    "sweep": "rate sweep",
    "capacity": "capacity search",
    "cold_start": "cold start",
    "crosscheck": "crosscheck with a second tool",
}
_SWEEP_HEADERS: tuple[str, ...] = (
    "rate",
    "sent",
    "answered",
    "p50_ms",
    "p99_ms",
    "errors",
    "runs",
    "valid",
)
_CAPACITY_HEADERS: tuple[str, ...] = ("capacity", "slo", "confirmed", "steps", "loads")
# A cold start's curve: the first second against the steady state, and when each settled.
_COLD_START_FIELDS: tuple[tuple[str, str], ...] = (
    ("first_s_rps", "first_second_rate"),
    ("steady_rps", "steady_rate"),
    ("ratio", "first_second_ratio"),
    ("settle_s", "settle_s"),
    ("first_s_p50", "first_second_p50_ms"),
    ("steady_p50", "steady_p50_ms"),
    ("p50_settle_s", "p50_settle_s"),
    ("valid", "valid"),
)

# A crosscheck: each figure by netbench, by the other tool, and netbench's over the other's.
_CROSSCHECK_METRICS: tuple[tuple[str, str], ...] = (
    ("rps", "rps"),
    ("p50", "p50_ms"),
    ("p99", "p99_ms"),
)
_CROSSCHECK_HEADERS: tuple[str, ...] = (
    "tool",
    *(head for short, name in _CROSSCHECK_METRICS for head in (name, f"tool_{short}", "ratio")),
    "errors",
    "tool_errors",
    "valid",
)


@dataclass(frozen=True, slots=True)
class ExperimentTable:
    function: str
    kind: str
    param_names: tuple[str, ...]  # the leading columns; the rest are the figures
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()  # stop reasons, why a capacity is what it is

    @property
    def title(self) -> str:
        return f"{self.function}  ({_TITLES.get(self.kind, self.kind)})"


def build_experiment_tables(records: Iterable[ExperimentRecord]) -> list[ExperimentTable]:
    """One table per (test function, kind), in the order they first appear."""
    groups: dict[tuple[str, str], list[ExperimentRecord]] = {}
    for record in records:
        groups.setdefault((record.function, record.kind), []).append(record)
    return [_build_one(function, kind, group) for (function, kind), group in groups.items()]


def _build_one(function: str, kind: str, records: list[ExperimentRecord]) -> ExperimentTable:
    params = [effective_params(r) for r in records]
    names = list(dict.fromkeys(n for p in params for n in p))
    varying = tuple(n for n in names if len({p.get(n, "-") for p in params}) > 1)
    if not varying and len(records) > 1:
        varying = tuple(names)
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    mix = False  # a sweep step of a mix shows its kinds in rows under it
    if kind == "sweep":
        headers = _SWEEP_HEADERS
    elif kind == "capacity":
        headers = _CAPACITY_HEADERS
    elif kind == "cold_start":
        headers = tuple(head for head, _field in _COLD_START_FIELDS)
    elif kind == "crosscheck":
        # A test parametrised by tool already shows it among the parameters.
        headers = _CROSSCHECK_HEADERS[1:] if "tool" in varying else _CROSSCHECK_HEADERS
    else:
        headers = _scalar_fields(records)
    for record, values in zip(records, params, strict=True):
        label = tuple(values.get(n, "-") for n in varying)
        where = ", ".join(label) + ": " if label else ""
        data = record.data
        if kind == "sweep":
            for step in data.get("steps", ()):
                rows.append(label + _sweep_cells(step))
                kinds = stored_step_requests(step)
                rows += [label + _sweep_request_cells(n, f) for n, f in kinds.items()]
                mix = mix or bool(kinds)
            if data.get("stop_reason"):
                notes.append(f"{where}{data['stop_reason']}")
        elif kind == "capacity":
            rows.append(label + _capacity_cells(data))
            notes.append(f"{where}{data.get('reason', '')}")
            notes += [f"{where}{line}" for line in _capacity_request_note(data)]
        elif kind == "cold_start":
            rows.append(label + _cold_start_cells(data))
        elif kind == "crosscheck":
            cells = _crosscheck_cells(data)
            rows.append(label + (cells[1:] if "tool" in varying else cells))
            if data.get("steady") is False:
                drift = data.get("drift")
                by = "" if drift is None else f" by {abs(float(drift)):.0%}"
                notes.append(
                    f"{where}unsteady: netbench's runs before and after {cells[0]}'s differ{by}"
                    " in req/s; the server changed while it was measured"
                )
        else:
            rows.append(label + tuple(_scalar_text(data.get(h)) for h in headers))
    if mix:
        notes.insert(0, _SWEEP_MIX_NOTE)
    return ExperimentTable(function, kind, varying, headers, tuple(rows), tuple(notes))


def _sweep_cells(step: Mapping[str, Any]) -> tuple[str, ...]:
    valid = _validity_text(step.get("valid", True), step.get("invalid_causes") or ())
    achieved = step.get("achieved_rate")
    answered = step.get("answered_rate")
    return (
        _rate(float(step["rate"])),
        "-" if achieved is None else _rate(float(achieved)),
        "-" if answered is None else _rate(float(answered)),
        _number(step.get("p50_ms")),
        _number(step.get("p99_ms")),
        f"{int(step.get('errors_total', 0)):,}",
        str(1 + len(step.get("discarded") or ())),
        valid,
    )


_SWEEP_MIX_NOTE = (
    "a row named after a request is that request of the mix at the rate above it: its"
    " answered req/s, latency (from when each request was due) and errors"
)


def _sweep_request_cells(name: str, figures: Mapping[str, Any]) -> tuple[str, ...]:
    """One kind of a mix at a sweep step, under the step's row, in its columns."""
    return (
        f"  {name}",
        "",
        _rate(float(figures.get("rps") or 0.0)),
        _number(figures.get("p50_ms")),
        _number(figures.get("p99_ms")),
        f"{int(figures.get('errors_total', 0)):,}",
        "",
        "",
    )


def _capacity_request_note(data: Mapping[str, Any]) -> list[str]:
    """A mix's kinds at the answer (or the highest rate verified): each one's p50, p99 and
    errors, so the endpoint that set the capacity is in sight."""
    rate = data.get("rate") if data.get("rate") is not None else data.get("at_least")
    if rate is None:
        return []
    passed = [
        s for s in data.get("steps") or () if s.get("rate") == rate and s.get("verdict") == "pass"
    ]
    kinds = stored_step_requests(passed[-1]) if passed else {}
    if not kinds:
        return []
    parts = [
        f"{name} p50 {_number(f.get('p50_ms'))} ms, p99 {_number(f.get('p99_ms'))} ms,"
        f" {int(f.get('errors_total', 0)):,} errors"
        for name, f in kinds.items()
    ]
    return [f"per request at {_rate(float(rate))} {_unit(data)}: " + "; ".join(parts)]


def _unit(data: Mapping[str, Any]) -> str:
    """What a capacity's rate counts: req/s, or (``over="connections"``) connections."""
    return "connections" if data.get("over") == "connections" else "req/s"


def _capacity_cells(data: Mapping[str, Any]) -> tuple[str, ...]:
    rate = data.get("rate")
    if rate is None:
        at_least = data.get("at_least")
        answer = "unknown" + (f" (>= {_rate(float(at_least))})" if at_least is not None else "")
    else:
        answer = f"{_rate(float(rate))} {_unit(data)}"
    return (
        answer,
        str(data.get("slo", "")),
        "yes" if data.get("confirmed") else "no",
        str(len(data.get("steps") or ())),
        str(data.get("loads", "")),
    )


def _cold_start_cells(data: Mapping[str, Any]) -> tuple[str, ...]:
    cells = []
    for _head, name in _COLD_START_FIELDS:
        value = data.get(name)
        if name.endswith("settle_s") and value is None:
            cells.append("never")  # stored as null when the run had not settled by its end
        elif name == "valid":
            cells.append(_validity_cell(data))
        elif name.endswith("_rate") and value is not None:
            cells.append(_rate(float(value)))
        else:
            cells.append(_scalar_text(value))
    return tuple(cells)


def _crosscheck_cells(data: Mapping[str, Any]) -> tuple[str, ...]:
    tool = str(data.get("tool", "?"))
    figures = data.get("figures") or {}
    cells = [tool]
    for _short, name in _CROSSCHECK_METRICS:
        figure = figures.get(name) or {}
        show = _rate if name == "rps" else abbreviate
        for value in (figure.get("netbench"), figure.get(tool)):
            cells.append("-" if value is None else show(float(value)))
        ratio = figure.get("ratio")
        cells.append("-" if ratio is None else f"{float(ratio):.2f}")
    errors = figures.get("errors") or {}
    cells += [_scalar_text(errors.get("netbench")), _scalar_text(errors.get(tool))]
    # netbench's own run: an invalid one (its generator saturated, say) makes the ratio moot.
    cells.append(_validity_cell(data))
    return tuple(cells)


def _validity_cell(data: Mapping[str, Any]) -> str:
    """An experiment's validity, with the causes of its kept run (``data["result"]``)."""
    result = data.get("result") or {}
    return _validity_text(data.get("valid", True), result.get("invalid_causes") or ())


def _validity_text(valid: bool, causes: Iterable[str]) -> str:
    """``yes``, or ``NO (causes)``: every experiment table says it the same way."""
    if valid:
        return "yes"
    named = ", ".join(dict.fromkeys(causes))
    return f"NO ({named})" if named else "NO"


def _scalar_fields(records: Sequence[ExperimentRecord]) -> tuple[str, ...]:
    """The top-level numbers, flags and short words of an experiment of another kind."""
    fields: dict[str, None] = {}
    for record in records:
        for name, value in record.data.items():
            if name != "kind" and (value is None or isinstance(value, bool | int | float)):
                fields[name] = None
    return tuple(fields)


def _scalar_text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return abbreviate(float(value))
    return str(value)


def _rate(value: float) -> str:
    """Whole requests a second with separators (``1,011``); three digits below 100."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _number(value: object) -> str:
    return "-" if value is None else abbreviate(float(value))  # type: ignore[arg-type]


# -- rendering ---------------------------------------------------------------------------------
def render_experiment_text(table: ExperimentTable, *, width: int = 80) -> str:
    """The table aligned, a parametrisation's repeated labels left blank, notes below."""
    labels = table.param_names or ()
    headers = (*labels, *table.headers)
    widths = [max([len(h), *(len(r[i]) for r in table.rows)]) for i, h in enumerate(headers)]
    lines = [table.title, ""]
    lines.append(_line(headers, widths, len(labels)))
    previous: tuple[str, ...] = ()
    for row in table.rows:
        shown = row
        if labels and row[: len(labels)] == previous:
            shown = ("",) * len(labels) + row[len(labels) :]
        previous = row[: len(labels)]
        lines.append(_line(shown, widths, len(labels)))
    for note in table.notes:
        if note.strip():
            lines += textwrap.wrap(note, width, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(lines) + "\n"


def _line(cells: Sequence[str], widths: Sequence[int], left_aligned: int) -> str:
    # Labels, and the first and last columns, read from the left; figures line up right.
    parts = [
        text.ljust(w) if i < max(left_aligned, 1) or i == len(cells) - 1 else text.rjust(w)
        for i, (text, w) in enumerate(zip(cells, widths, strict=True))
    ]
    return "  ".join(parts).rstrip()


def render_all_experiments_text(tables: Iterable[ExperimentTable], *, width: int = 80) -> str:
    return "\n".join(render_experiment_text(t, width=width) for t in tables)


def render_experiment_markdown(table: ExperimentTable, *, heading_level: int = 3) -> str:
    """The same rows as a Markdown table under a heading, the notes as a list."""
    function = table.function.replace("|", "\\|")
    heading = f"{'#' * heading_level} `{function}` ({_TITLES.get(table.kind, table.kind)})"
    headers = (*table.param_names, *table.headers) if table.param_names else table.headers
    body = render_table_markdown(headers, table.rows) if table.rows else "(no steps ran)\n"
    notes = "".join(f"- {n}\n" for n in table.notes if n.strip())
    return f"{heading}\n\n{body}" + (f"\n{notes}" if notes else "")
