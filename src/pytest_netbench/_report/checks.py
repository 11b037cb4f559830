"""Checks on responses in the text of one load (``netbench http``): each check's passes,
failures and pass rate, a failed one marked, as k6 marks its checks. The session's tables
of them are ``check_tables.py``'s (a one-load report imports no session records)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_netbench._model import CheckStats, LoadResult

HEADINGS = ("check", "passes", "failures", "pass rate", "expression")


def rate_text(check: CheckStats) -> str:
    """``90.00 %``; ``100 %`` only when every response passed (never rounded up to it);
    ``-`` when no response was checked."""
    if check.total == 0:
        return "-"
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
