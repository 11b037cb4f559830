"""Checks on responses in the reports: each check's passes, failures and pass rate, in the
text of one load (``netbench http``), under a test's matrix in the terminal and the
Markdown (per parametrisation, its median trial), and as rows the HTML report shows
(``html/checks.py``). A failed check is marked in every one, as k6 marks its checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_netbench._compare.records import Record
from pytest_netbench._experiment.trials import median_trial
from pytest_netbench._model import CheckStats, LoadResult
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.matrix import effective_params

HEADINGS = ("check", "passes", "failures", "pass rate", "expression")


@dataclass(frozen=True, slots=True)
class CheckedLoad:
    """One load of a test that had checks: its parameters as words, and its result."""

    caption: str
    result: LoadResult


def rate_text(check: CheckStats) -> str:
    """``90.00 %``; ``100 %`` only when every response passed (never rounded up to it)."""
    if check.failures == 0:
        return "100 %"
    return f"{min(check.rate * 100, 99.99):.2f} %"


def cells(check: CheckStats) -> list[str]:
    expression = "" if check.check == check.name else check.check
    return [check.name, f"{check.passes:,}", f"{check.failures:,}", rate_text(check), expression]


def check_lines(result: LoadResult, *, indent: str = "  ") -> list[str]:
    """The checks of one load as a small table, a failed one marked ``FAILED``."""
    if not result.checks:
        return []
    rows = [cells(c) for c in result.checks.values()]
    marks = ["FAILED" if c.failures else "ok" for c in result.checks.values()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADINGS)]

    def line(mark: str, row: Sequence[str]) -> str:
        first = row[0].ljust(widths[0])
        figures = [cell.rjust(widths[i + 1]) for i, cell in enumerate(row[1:4])]
        return f"{indent}{mark:<6}  " + "  ".join([first, *figures, row[4]]).rstrip()

    failed = sum(1 for c in result.checks.values() if c.failures)
    title = f"{failed} of {len(rows)} failed" if failed else f"all {len(rows)} passed"
    return [
        "",
        f"Checks: {title}",
        line("", HEADINGS),
        *(line(m, r) for m, r in zip(marks, rows, strict=True)),
    ]


def checked_loads(records: Sequence[Record], function: str) -> list[CheckedLoad]:
    """The loads of ``function`` that had checks: per parametrisation its median trial."""
    groups: dict[tuple[tuple[str, str], ...], list[Record]] = {}
    for record in records:
        if record.function == function and record.result.checks:
            groups.setdefault(tuple(effective_params(record).items()), []).append(record)
    loads = []
    for key, trials in groups.items():
        median = median_trial([r.result for r in trials])
        words = [f"{name}={value}" for name, value in key]
        if len(trials) > 1:
            words.append(f"median trial of {len(trials)}")
        loads.append(CheckedLoad(", ".join(words), median))
    return loads


def check_tables_text(records: Sequence[Record], function: str) -> str:
    """Under a test's matrix in the terminal: the checks of each load of it that had some."""
    parts = []
    for load in checked_loads(records, function):
        where = f", {load.caption}" if load.caption else ""
        lines = check_lines(load.result, indent="  ")
        lines[1] = f"  checks{where}: {lines[1].removeprefix('Checks: ')}"
        parts.append("\n".join(lines))
    return "\n".join(parts) + ("\n" if parts else "")


def check_tables_markdown(records: Sequence[Record], function: str) -> str:
    """A table of checks per load of ``function`` that had some, each under a heading."""
    parts = []
    for load in checked_loads(records, function):
        where = f": {load.caption}" if load.caption else ""
        rows = [
            [f"**{c[0]}** (failed)" if check.failures else c[0], *c[1:]]
            for check, c in ((check, cells(check)) for check in load.result.checks.values())
        ]
        parts.append(f"#### Checks{where}\n")
        parts.append(render_table_markdown(HEADINGS, rows, text_columns=("expression",)))
    return "\n".join(parts)
