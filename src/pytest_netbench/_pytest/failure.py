"""What a failing netbench test adds to its report: each load's summary and the server log.

A bare ``assert r.p99_ms < 50`` says nothing about why; the percentile table, the error
kinds and the last lines the server printed usually do.
"""

from __future__ import annotations

import pytest

from pytest_netbench._pytest.fixtures import RESULTS_KEY, servers_of

_LOG_TAIL_LINES = 20


def add_failure_sections(item: pytest.Item, report: pytest.TestReport) -> None:
    from pytest_netbench._report.summary import format_result

    for title, result in item.stash.get(RESULTS_KEY, []):
        report.sections.append((f"netbench result: {title}", format_result(result)))
    for srv in servers_of(item):
        try:
            tail = srv.log_tail(lines=_LOG_TAIL_LINES)
        except OSError as exc:
            tail = f"(log unreadable: {exc})"
        name = getattr(srv, "name", None) or srv.url
        report.sections.append(
            (f"netbench server log: {name} (last {_LOG_TAIL_LINES} lines)", tail or "(empty)")
        )
