"""A flow load in words: what it ran (its flows and their weights, its model of users or
of sessions at a rate) for the report's heading, and its ``Sessions`` block
(``LoadResult.sessions``) under the load's report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._model import LoadResult, LoadSpec, SessionStats
from pytest_netbench._report.cells import format_count

# A session's records are read by the files' tables only: a command's text report
# imports neither them nor the host description (issue 35).
if TYPE_CHECKING:
    from pytest_netbench._compare.records import Record
    from pytest_netbench._report.requests import MixLoad

# The sessions table's columns (Markdown and HTML): figures, then the words of failures.
SESSION_HEADINGS = (
    "flows",
    "users",
    "started",
    "completed",
    "failed",
    "in progress",
    "not started",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "max ms",
    "failed at",
    "failed by",
)
SESSION_WORDS = ("flows", "failed at", "failed by")
SESSION_LEGEND = (
    "sessions started inside the window; duration percentiles of the completed ones, think"
    " time included; failed at: the step a failed session's last request was; failed by:"
    " that request's error kind, or flow when the flow itself raised"
)

# A failure's description is a traceback for a flow's own exception: its last line says it.
_SAMPLE_CHARS = 160


def format_sessions(stats: SessionStats) -> str:
    """A ``Sessions`` block: how many started, completed, failed and were in progress, the
    durations of the completed ones, then where sessions failed, and why."""
    lines = [
        "",
        f"Sessions ({stats.users} users)",
        f"  started {stats.started:,}  completed {stats.completed:,}  failed {stats.failed:,}"
        f"  in progress {stats.in_progress:,}"
        + (f"  not started {stats.not_started:,}" if stats.not_started else ""),
    ]
    if stats.duration.count:
        d = stats.duration
        lines.append(
            f"  duration (ms) p50 {d.p50_ms:.1f}  p90 {d.p90_ms:.1f}  p99 {d.p99_ms:.1f}"
            f"  max {d.max_ms:.1f}  (completed sessions, think time included)"
        )
    if len(stats.by_flow) > 1:
        started = "  ".join(f"{name} {count:,}" for name, count in stats.by_flow.items())
        lines.append(f"  by flow   {started} (sessions started)")
    for step, count in stats.failed_at.items():
        lines.append(f"  failed at {step}: {count:,}")
    for kind, count in stats.failure_kinds.items():
        sample = stats.failure_samples.get(kind, "").strip().splitlines()
        said = sample[-1][:_SAMPLE_CHARS] if sample else ""
        what = "the flow raised (a bug in the flow)" if kind == "flow" else kind
        lines.append(f"  failed by {what}: {count:,}" + (f", e.g. {said}" if said else ""))
    return "\n".join(lines) + "\n"


def describe_flows(stats: SessionStats) -> str:
    """``shop_flows:shopper``; several by weight: ``shop:browse x3, shop:buy x1``."""
    flows = stats.flows or {name: 1 for name in stats.by_flow}  # stored before flows were
    if len(flows) == 1:
        return next(iter(flows))
    return ", ".join(f"{name} x{weight}" for name, weight in flows.items())


def flow_target(result: LoadResult) -> str:
    """The heading's target of a flow load: ``Flow: shop_flows:shopper on URL``."""
    stats = result.sessions
    assert stats is not None
    noun = "Flow" if len(stats.flows or stats.by_flow) <= 1 else "Flows by weight"
    return f"{noun}: {describe_flows(stats)} on {result.url}"


def flow_model(spec: LoadSpec) -> list[str]:
    """The model of a flow load, in the heading's words: ``closed model, 20 users`` or
    ``open model, sessions at 100/s (uniform), 5 users growing up to 1,024``."""
    stages = ", ".join(stage.text for stage in spec.stages)
    if spec.rate is None:
        users = f"stages {stages} from {spec.connections} users" if stages else ""
        return ["closed model", users or f"{spec.connections} users"]
    rate = f"{format_count(spec.rate)}/s ({spec.arrival})"
    pace = f"stages {stages} from {rate}" if stages else f"sessions at {rate}"
    users = f"{spec.connections} users"
    if spec.pool_limit > spec.connections:
        users += f" growing up to {spec.pool_limit:,}"
    return ["open model", pace, users]


def flow_loads(records: Sequence[Record], function: str) -> list[MixLoad]:
    """The flow loads of ``function``: per parametrisation its median trial, captioned."""
    from pytest_netbench._report.requests import mix_loads

    return [load for load in mix_loads(records, function) if load.result.sessions is not None]


def session_cells(stats: SessionStats) -> list[str]:
    """A flow load's sessions as a row of :data:`SESSION_HEADINGS`."""
    d = stats.duration
    times = [f"{v:,.1f}" for v in (d.p50_ms, d.p90_ms, d.p99_ms, d.max_ms)]
    return [
        describe_flows(stats),
        f"{stats.users:,}",
        f"{stats.started:,}",
        f"{stats.completed:,}",
        f"{stats.failed:,}",
        f"{stats.in_progress:,}",
        f"{stats.not_started:,}",
        *(times if d.count else ["-"] * len(times)),
        ", ".join(f"{step} {n:,}" for step, n in stats.failed_at.items()),
        ", ".join(f"{kind} {n:,}" for kind, n in stats.failure_kinds.items()),
    ]


def sessions_markdown(records: Sequence[Record], function: str) -> str:
    """A ``Sessions`` table for the flow loads of ``function`` (a row each), or nothing."""
    from pytest_netbench._report.markdown import render_table_markdown

    loads = flow_loads(records, function)
    if not loads:
        return ""
    captioned = any(load.caption for load in loads)
    headings = ("load", *SESSION_HEADINGS) if captioned else SESSION_HEADINGS
    rows = []
    for load in loads:
        assert load.result.sessions is not None
        cells = session_cells(load.result.sessions)
        rows.append([load.caption, *cells] if captioned else cells)
    table = render_table_markdown(headings, rows, text_columns=("load", *SESSION_WORDS))
    return f"#### Sessions\n\n{table}\n{SESSION_LEGEND[0].upper()}{SESSION_LEGEND[1:]}.\n"
