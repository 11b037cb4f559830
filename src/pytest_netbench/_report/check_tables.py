"""Checks on responses in a session's reports: under a test's matrix in the terminal and
the Markdown (per parametrisation, its median trial), and as rows the HTML report shows
(``html/checks.py``); each table's rows are ``checks.py``'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_netbench._compare.records import Record
from pytest_netbench._experiment.trials import median_trial
from pytest_netbench._model import LoadResult
from pytest_netbench._report.checks import HEADINGS, cells, check_lines
from pytest_netbench._report.markdown import render_table_markdown
from pytest_netbench._report.matrix import effective_params


@dataclass(frozen=True, slots=True)
class CheckedLoad:
    """One load of a test that had checks: its parameters as words, and its result."""

    caption: str
    result: LoadResult


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
