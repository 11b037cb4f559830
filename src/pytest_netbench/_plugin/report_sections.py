"""What a netbench test's report shows beyond pytest's own.

A bare ``assert r.p99_ms < 50`` says nothing about why it failed; the percentile table,
error kinds and the server's last words usually do. So a failed test's report gets each
load's full summary, each experiment's table and the tail of each server's log; a passed
one gets a line per load or experiment (shown with ``-rP``), and a line per look of a
sequential gate. Runs discarded because the generator spoiled them are named beside the
result that replaced them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_netbench._plugin.test_state import (
    EXPERIMENTS_KEY,
    LOADS_KEY,
    LOOKS_KEY,
    ShownLoad,
    servers_of,
)

if TYPE_CHECKING:
    import pytest

    from pytest_netbench._compare.records import ExperimentRecord

_LOG_TAIL_LINES = 20


def add_report_sections(item: pytest.Item, report: pytest.TestReport) -> None:
    """A failed test: full summaries and server logs. A passed one: a line per load."""
    if report.failed:
        _add_failure_sections(item, report)
    elif report.when == "call":
        lines = [_one_line(shown) for shown in item.stash.get(LOADS_KEY, [])]
        lines += [_experiment_line(t, r) for t, r in item.stash.get(EXPERIMENTS_KEY, [])]
        looks: list[str] = item.stash.get(LOOKS_KEY, [])
        lines += looks
        if lines:
            report.sections.append(("netbench results", "\n".join(lines)))


def _causes(shown: ShownLoad) -> str:
    from pytest_netbench._compare.records import discard_counts

    return ", ".join(f"{c} {n}" for c, n in discard_counts(shown.discarded).items())


def _discarded_note(shown: ShownLoad) -> str:
    if not shown.discarded:
        return ""
    return f" (after {len(shown.discarded)} discarded run(s): {_causes(shown)})"


def _one_line(shown: ShownLoad) -> str:
    result = shown.result
    flag = "" if result.valid else "  INVALID"
    latency = (
        f"p50 {result.p50_ms:.3f} ms, p99 {result.p99_ms:.3f} ms"
        if result.ok
        else "no latency (no ok response)"
    )
    return (
        f"{shown.title}: {result.rps:,.0f} req/s, {latency}, {result.ok} ok,"
        f" {result.errors_total} errors{flag}" + _discarded_note(shown)
    )


def _experiment_line(title: str, record: ExperimentRecord) -> str:
    data = record.data
    if record.kind == "sweep":
        steps = data.get("steps") or []
        valid = sum(1 for s in steps if s.get("valid"))
        stopped = "; stopped early" if data.get("stopped_early") else ""
        return f"{title}: sweep of {len(steps)} step(s), {valid} valid{stopped}"
    if record.kind == "capacity":
        rate = data.get("rate")
        unit = "connections" if data.get("over") == "connections" else "req/s"
        answer = "unknown" if rate is None else f"{float(rate):,.6g} {unit}"
        return f"{title}: capacity {answer} ({data.get('slo')}), {data.get('loads')} loads"
    if record.kind == "cold_start":
        ratio, settle = data.get("first_second_ratio"), data.get("settle_s")
        first = f"first second at {ratio:.0%} of the steady rate" if ratio is not None else ""
        settled = f"settled at {settle:g} s" if settle is not None else "never settled"
        return f"{title}: cold start, {first or 'no steady rate'}, {settled}"
    if record.kind == "crosscheck":
        tool, figures = data.get("tool"), data.get("figures") or {}
        parts = []
        # h2load prints no percentiles: its mean is compared instead of p99.
        for name, unit in (("rps", "req/s"), ("p99_ms", "ms p99"), ("mean_ms", "ms mean")):
            figure = figures.get(name) or {}
            ours, theirs, ratio = figure.get("netbench"), figure.get(tool), figure.get("ratio")
            if ours is not None and theirs is not None:
                shown = f" ({ratio:.2f})" if ratio is not None else ""
                parts.append(f"{ours:,.6g} vs {theirs:,.6g} {unit}{shown}")
        return f"{title}: crosscheck, netbench vs {tool}: {', '.join(parts) or 'no figures'}"
    return f"{title}: {record.kind}"


def _add_failure_sections(item: pytest.Item, report: pytest.TestReport) -> None:
    from pytest_netbench._report.experiment_tables import (
        build_experiment_tables,
        render_experiment_text,
    )
    from pytest_netbench._report.sessions import format_sessions
    from pytest_netbench._report.summary import format_result

    for shown in item.stash.get(LOADS_KEY, []):
        text = format_result(shown.result)
        if shown.result.sessions is not None:  # a user flow's sessions, under its steps
            text += format_sessions(shown.result.sessions)
        if shown.discarded:
            last = "; ".join(shown.discarded[-1].invalid_reasons)
            text += (
                f"\n{len(shown.discarded)} earlier run(s) of this load were discarded"
                f" ({_causes(shown)}); the last said: {last}\n"
            )
        report.sections.append((f"netbench result: {shown.title}", text))
    for title, record in item.stash.get(EXPERIMENTS_KEY, []):
        for table in build_experiment_tables([record]):
            report.sections.append(
                (f"netbench {record.kind}: {title}", render_experiment_text(table))
            )
    looks = item.stash.get(LOOKS_KEY, [])
    if looks:
        report.sections.append(("netbench gate looks", "\n".join(looks)))
    for srv in servers_of(item):
        try:
            tail = srv.log_tail(lines=_LOG_TAIL_LINES)
        except OSError as exc:
            tail = f"(log unreadable: {exc})"
        name = getattr(srv, "name", None) or srv.url
        report.sections.append(
            (f"netbench server log: {name} (last {_LOG_TAIL_LINES} lines)", tail or "(empty)")
        )
