"""A request mix seen per request kind: one row per kind (``LoadResult.by_request``) and a
row of the load's own figures under them, which the kinds add up to.

The rows are the model every rendering reads (the text report and the terminal summary
here, Markdown here, the HTML report in :mod:`.html.requests`), so they agree number for
number. A test function's loads are shown one table per parametrisation, its median trial
(the one the matrices' single-trial figures come from when there is one trial).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_netbench._model import ERROR_KINDS, LatencySummary, LoadResult, RequestStats
from pytest_netbench._report.cells import format_count, format_ms

# A session's records are read by the files' tables only: a command's text report, which
# reads ``request_lines``, imports neither them nor the experiments (issue 35).
if TYPE_CHECKING:
    from pytest_netbench._compare.records import Record

TOTAL = "all"  # the name of the load's own row

# (heading, LatencySummary field): the percentiles every per-request table lists.
LATENCY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("p50", "p50_ms"),
    ("p90", "p90_ms"),
    ("p99", "p99_ms"),
    ("p99.9", "p999_ms"),
    ("max", "max_ms"),
)
_NAME_CHARS = 16  # the text table cuts a long name to fit its width, never below this
_TEXT_HEADINGS = ("request", "sent", "ok", "errors", "req/s", *(h for h, _ in LATENCY_COLUMNS))
LEGEND = (
    "one row per request kind of the mix, and all: the load's own figures, which the kinds"
    " add up to; latency in ms, of each kind's ok responses (open loop: from when each"
    " request was due)"
)


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One request kind's figures, or the load's (``total``)."""

    name: str
    target: str  # "GET /items?page=2"; empty for the total row
    sent: int
    ok: int
    errors: tuple[tuple[str, int], ...]  # the kinds that occurred, in ERROR_KINDS order
    in_flight: int
    status_codes: tuple[tuple[int, int], ...]
    rps: float
    latency: LatencySummary
    total: bool = False

    @property
    def errors_total(self) -> int:
        return sum(count for _, count in self.errors)

    @property
    def errors_text(self) -> str:
        """``reset 3, status 2``; ``-`` without errors."""
        return ", ".join(f"{kind} {count:,}" for kind, count in self.errors) or "-"

    @property
    def status_text(self) -> str:
        """``200: 998, 404: 2``; ``-`` when no response came back."""
        return ", ".join(f"{code}: {count:,}" for code, count in self.status_codes) or "-"

    def latency_cells(self) -> list[str]:
        return [format_ms(getattr(self.latency, name)) for _, name in LATENCY_COLUMNS]


@dataclass(frozen=True, slots=True)
class MixLoad:
    """A load of a test that sent a mix: which one (``caption``), and the record shown, the
    median of ``trials`` trials of its parametrisation."""

    caption: str
    record: Record
    trials: int = 1

    @property
    def result(self) -> LoadResult:
        return self.record.result


def request_rows(result: LoadResult) -> list[RequestRow]:
    """The kinds in the mix's order, then the load's own row; nothing without a mix."""
    if not result.by_request:
        return []
    rows = [
        _row(name, f"{stats.method} {stats.path}", stats)
        for name, stats in result.by_request.items()
    ]
    rows.append(_row(TOTAL, "", result, total=True))
    return rows


def _row(
    name: str, target: str, figures: RequestStats | LoadResult, total: bool = False
) -> RequestRow:
    """One kind's row from its figures, or the load's own from the result's."""
    return RequestRow(
        name=name,
        target=target,
        sent=figures.sent,
        ok=figures.ok,
        errors=_error_counts(figures.errors),
        in_flight=figures.in_flight,
        status_codes=tuple(sorted(figures.status_codes.items())),
        rps=figures.rps,
        latency=figures.latency,
        total=total,
    )


def _error_counts(errors: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    kinds = [*ERROR_KINDS, *sorted(set(errors) - set(ERROR_KINDS))]
    return tuple((kind, errors[kind]) for kind in kinds if errors.get(kind))


def mix_loads(records: Sequence[Record], function: str) -> list[MixLoad]:
    """The loads of ``function`` that sent a mix: per parametrisation its median trial,
    captioned by its parameters (and the trials it was chosen from, and ``INVALID`` when
    its figures cannot be trusted)."""
    return shown_loads(records, function, lambda result: bool(result.by_request))


def shown_loads(
    records: Sequence[Record], function: str, keep: Callable[[LoadResult], bool]
) -> list[MixLoad]:
    """:func:`mix_loads` for the loads of ``function`` whose result ``keep`` keeps."""
    from pytest_netbench._experiment.trials import median_trial
    from pytest_netbench._report.matrix import effective_params

    groups: dict[tuple[tuple[str, str], ...], list[Record]] = {}
    for record in records:
        if record.function == function and keep(record.result):
            key = tuple(effective_params(record).items())
            groups.setdefault(key, []).append(record)
    loads = []
    for key, trials in groups.items():
        median = median_trial([r.result for r in trials])
        record = next(r for r in trials if r.result is median)
        words = [f"{name}={value}" for name, value in key]
        if len(trials) > 1:
            words.append(f"median trial of {len(trials)}")
        if not median.valid:  # its reasons are under the matrix; the table says it too
            words.append("INVALID")
        loads.append(MixLoad(", ".join(words), record, len(trials)))
    return loads


# -- text ----------------------------------------------------------------------------------------
def request_lines(result: LoadResult, width: int, *, indent: str = "  ") -> list[str]:
    """The table, then per kind its status codes, error kinds and requests in flight."""
    rows = request_rows(result)
    if not rows:
        return []
    table = [
        [
            row.name,
            format_count(row.sent),
            format_count(row.ok),
            format_count(row.errors_total),
            format_count(row.rps),
            *row.latency_cells(),
        ]
        for row in rows
    ]
    widths = [
        max(len(heading), *(len(cells[i]) for cells in table))
        for i, heading in enumerate(_TEXT_HEADINGS)
    ]
    _fit_names(table, widths, width - len(indent))
    lines = [indent + _text_row(list(_TEXT_HEADINGS), widths)]
    lines += [indent + _text_row(cells, widths) for cells in table]
    for row in rows[:-1]:  # the load's own codes and errors are in its report already
        lines += textwrap.wrap(
            _details(row), width, initial_indent=indent, subsequent_indent=indent + "    "
        )
    return lines


def _fit_names(table: list[list[str]], widths: list[int], room: int) -> None:
    """Long names (templated paths) cut so the table fits ``room`` columns, never below
    :data:`_NAME_CHARS`, and only while the cut names stay apart; each name is whole on
    its own line under the table."""
    figures = sum(widths[1:]) + 2 * (len(widths) - 1)
    limit = max(_NAME_CHARS, room - figures)
    if widths[0] <= limit:
        return
    cut = [n if len(n) <= limit else n[: limit - 1] + "~" for n in (r[0] for r in table)]
    if len(set(cut)) < len(cut):
        return  # "GET /search?q=a" and "GET /search?q=b" would read alike: keep them whole
    for cells, name in zip(table, cut, strict=True):
        cells[0] = name
    widths[0] = max(len(_TEXT_HEADINGS[0]), *(len(n) for n in cut))


def _text_row(cells: list[str], widths: list[int]) -> str:
    first = cells[0].ljust(widths[0])
    rest = [cell.rjust(w) for cell, w in zip(cells[1:], widths[1:], strict=True)]
    return "  ".join([first, *rest]).rstrip()


def _details(row: RequestRow) -> str:
    parts = [f"{_named(row)}: status {row.status_text}"]
    if row.errors:
        parts.append(f"errors {row.errors_text}")
    if row.in_flight:
        parts.append(f"{row.in_flight:,} in flight")
    return "; ".join(parts)


def _named(row: RequestRow, *, code: str = "") -> str:
    """``search (GET /search?q=x)``; the target alone when it is the name (the default)."""
    target = f"{code}{row.target}{code}"
    return target if row.name == row.target else f"{row.name} ({target})"


def request_tables_text(records: Sequence[Record], function: str, *, width: int = 80) -> str:
    """Under a test's matrix in the terminal: a table per load of it that sent a mix."""
    parts = []
    for load in mix_loads(records, function):
        where = f", {load.caption}" if load.caption else ""
        lines = ["", f"  per request{where} (latency in ms)"]
        lines += request_lines(load.result, width, indent="  ")
        parts.append("\n".join(lines))
    return "\n".join(parts) + ("\n" if parts else "")


# -- Markdown ------------------------------------------------------------------------------------
MARKDOWN_HEADINGS = (
    "request",
    "sent",
    "ok",
    "errors",
    "errors by kind",
    "in flight",
    "status codes",
    "req/s",
    *(f"{heading} ms" for heading, _ in LATENCY_COLUMNS),
)


def markdown_cells(row: RequestRow) -> list[str]:
    """A row as the Markdown and HTML tables word it (the HTML adds the target)."""
    name = f"**{row.name}**" if row.total else _named(row, code="`")
    return [
        name,
        f"{row.sent:,}",
        f"{row.ok:,}",
        f"{row.errors_total:,}",
        row.errors_text,
        f"{row.in_flight:,}",
        row.status_text,
        f"{row.rps:,.1f}",
        *row.latency_cells(),
    ]


def request_tables_markdown(records: Sequence[Record], function: str) -> str:
    """A table per load of ``function`` that sent a mix, each under a small heading."""
    from pytest_netbench._report.markdown import render_table_markdown

    parts = []
    for load in mix_loads(records, function):
        where = f": {load.caption}" if load.caption else ""
        rows = [markdown_cells(row) for row in request_rows(load.result)]
        parts.append(
            f"#### Per request{where}\n\n"
            + render_table_markdown(
                MARKDOWN_HEADINGS, rows, text_columns=("errors by kind", "status codes")
            )
        )
    if not parts:
        return ""
    return "\n".join(parts) + f"\n{LEGEND[0].upper()}{LEGEND[1:]}.\n"
