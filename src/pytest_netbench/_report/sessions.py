"""The text lines of a flow's sessions (``LoadResult.sessions``) under its load's report."""

from __future__ import annotations

from pytest_netbench._model import SessionStats

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
