"""Merge worker outcomes into one :class:`LoadResult`, and judge whether it can be trusted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pytest_netbench._model import (
    ERROR_KINDS,
    GeneratorStats,
    LoadResult,
    LoadSpec,
    ServerStats,
    TimelineRow,
)
from pytest_netbench._stats.histogram import (
    encode_histogram,
    histogram_from_counts,
    percentile_of_counts,
    summarize,
)
from pytest_netbench._stats.recorder import SecondRow, WorkerOutcome

# A worker runnable (running or queued for a CPU) this share of the window was the
# bottleneck, not the server.
SATURATED_CPU_SHARE = 0.90
# Open loop: the scheduler may fall this far behind before figures are called untrustworthy.
MAX_SCHEDULE_LAG_P99_MS = 10.0
MAX_UNSENT_SHARE = 0.01


def merge_outcomes(
    spec: LoadSpec,
    outcomes: Sequence[WorkerOutcome],
    server: ServerStats | None = None,
) -> LoadResult:
    latency_counts: Counter[int] = Counter()
    uncorrected_counts: Counter[int] = Counter()
    lag_counts: Counter[int] = Counter()
    errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
    status_codes: Counter[int] = Counter()
    samples: dict[str, str] = {}
    for out in outcomes:
        latency_counts.update(out.latency_counts)
        uncorrected_counts.update(out.uncorrected_counts)
        lag_counts.update(out.lag_counts)
        status_codes.update(out.status_codes)
        for kind, n in out.errors.items():
            errors[kind] += n
        for kind, text in out.error_samples.items():
            samples.setdefault(kind, text)

    start = min(o.window_start_ns for o in outcomes)
    end = max(o.window_end_ns for o in outcomes)
    duration_s = max(end - start, 0) / 1e9
    sent = sum(o.sent for o in outcomes)
    in_flight = sum(o.in_flight for o in outcomes)
    ok = sum(latency_counts.values())
    hist = histogram_from_counts(latency_counts)
    open_loop = spec.rate is not None
    generator = _generator_stats(spec, outcomes, lag_counts, duration_s)
    reasons = _invalid_reasons(spec, outcomes, generator, duration_s)
    return LoadResult(
        mode="open" if open_loop else "closed",
        url=spec.url,
        duration_s=duration_s,
        sent=sent,
        ok=ok,
        errors=errors,
        in_flight=in_flight,
        status_codes=dict(sorted(status_codes.items())),
        bytes_read=sum(o.bytes_read for o in outcomes),
        bytes_written=sum(o.bytes_written for o in outcomes),
        latency=summarize(hist),
        uncorrected=summarize(histogram_from_counts(uncorrected_counts)) if open_loop else None,
        timeline=_merge_timeline([o.seconds for o in outcomes]),
        server=server,
        generator=generator,
        valid=not reasons,
        invalid_reasons=tuple(reasons),
        error_samples=samples,
        spec=spec,
        latency_histogram=encode_histogram(hist),
    )


def _merge_timeline(per_worker: Sequence[Sequence[SecondRow]]) -> tuple[TimelineRow, ...]:
    length = max((len(rows) for rows in per_worker), default=0)
    merged: list[TimelineRow] = []
    for second in range(length):
        counts: Counter[int] = Counter()
        ok = errors = 0
        for rows in per_worker:
            if second < len(rows):
                row = rows[second]
                ok += row.ok
                errors += row.errors
                counts.update(row.counts)
        merged.append(TimelineRow(second, ok, errors, percentile_of_counts(counts, 99.0)))
    return tuple(merged)


def _generator_stats(
    spec: LoadSpec,
    outcomes: Sequence[WorkerOutcome],
    lag_counts: Counter[int],
    duration_s: float,
) -> GeneratorStats:
    cpu_s = sum(o.cpu_s for o in outcomes)
    busiest_cpu = max((o.cpu_s for o in outcomes), default=0.0)
    busiest = max((max(o.busy_s, o.cpu_s) for o in outcomes), default=0.0)
    open_loop = spec.rate is not None
    sent = sum(o.sent for o in outcomes)
    return GeneratorStats(
        workers=len(outcomes),
        loop=outcomes[0].loop if outcomes else "",
        cpu_s=cpu_s,
        cpu_percent=100.0 * busiest_cpu / duration_s if duration_s > 0 else 0.0,
        busy_percent=100.0 * busiest / duration_s if duration_s > 0 else 0.0,
        connections_opened=sum(o.connections_opened for o in outcomes),
        connections_peak=sum(o.connections_peak for o in outcomes),
        intended_rate=spec.rate,
        achieved_rate=sent / duration_s if open_loop and duration_s > 0 else None,
        send_lag_p99_ms=percentile_of_counts(lag_counts, 99.0) if open_loop else None,
        send_lag_max_ms=(max(lag_counts) / 1000.0 if lag_counts else 0.0) if open_loop else None,
        late_sends=sum(o.late_sends for o in outcomes),
        unsent=sum(o.unsent for o in outcomes),
    )


def _invalid_reasons(
    spec: LoadSpec,
    outcomes: Sequence[WorkerOutcome],
    generator: GeneratorStats,
    duration_s: float,
) -> list[str]:
    reasons: list[str] = []
    faults = sum(o.generator_faults for o in outcomes)
    if faults:
        reasons.append(
            f"generator ran out of file descriptors or local ports ({faults} failed connects):"
            " raise `ulimit -n`, lower connections, or enable keep-alive"
        )
    if duration_s >= 0.2 and generator.busy_percent >= SATURATED_CPU_SHARE * 100:
        reasons.append(
            f"generator saturated: a worker was running or waiting for a CPU"
            f" {min(generator.busy_percent, 100):.0f}% of the time (cpu"
            f" {generator.cpu_percent:.0f}%), so the figures may measure the generator rather"
            " than the server: add workers or cores, or lower the load"
        )
    if spec.rate is not None:
        scheduled = sum(o.scheduled for o in outcomes)
        if generator.unsent > MAX_UNSENT_SHARE * scheduled + 1:
            reasons.append(
                f"rate not achieved: {generator.unsent} of {scheduled} scheduled requests were"
                f" never sent (connection pool limit {spec.max_connections} reached while the"
                " server fell behind): raise max_connections or lower the rate"
            )
        lag = generator.send_lag_p99_ms
        if lag is not None and lag > MAX_SCHEDULE_LAG_P99_MS:
            reasons.append(
                f"generator fell behind its schedule: send lag p99 {lag:.1f} ms: add workers or"
                " lower the rate"
            )
    return reasons
