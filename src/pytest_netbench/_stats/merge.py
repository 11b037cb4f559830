"""Merge worker outcomes into one :class:`LoadResult`, and judge whether it can be trusted."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from hdrh.histogram import HdrHistogram

from pytest_netbench._model import (
    ERROR_KINDS,
    GeneratorStats,
    InvalidCause,
    LatencySummary,
    LoadResult,
    LoadSpec,
    Phases,
    RequestStats,
    ServerStats,
    ShareStats,
    TimelineRow,
)
from pytest_netbench._model.checks import CheckStats, check_slots
from pytest_netbench._model.streams import EventCounts, StreamStats
from pytest_netbench._stats.histogram import (
    encode_histogram,
    histogram_from_counts,
    mean_and_stdev_us,
    percentile_of_counts,
    values_at_percentiles,
)
from pytest_netbench._stats.recorder import (
    PHASES,
    UPGRADE_RECEIVE,
    UPGRADE_WAIT,
    TimelineBucket,
    WorkerOutcome,
)
from pytest_netbench._stats.streams import merged_streams

# A worker runnable (running or queued for a CPU) this share of the window was the
# bottleneck, not the server.
SATURATED_CPU_SHARE = 0.90
# Open loop: the scheduler may fall this far behind before figures are called untrustworthy.
MAX_SCHEDULE_LAG_P99_MS = 10.0
MAX_UNSENT_SHARE = 0.01
# A managed server whose wait behind other processes (neither its own tree nor this
# test's: ServerStats.contended_wait_s) was this share of the time it wanted a CPU, and at
# least this share of its CPUs' time over the sampled span (span x CPUs: its threads wait
# side by side), was measured with the host's contention in its figures. Both bounds, so a
# lightly loaded server whose wake-ups waited on a busy machine is not called contended:
# the README's Go example at 1,000 req/s on 2 unpinned cores, another clone's test suite
# taking 34-56 % of them, waited behind it 6-9 % of its CPUs' time (rate achieved, p99
# 1.4-2.4 ms), while 1 s loads with a busy loop pinned beside a one-core server (its rate
# down 35-45 %) waited behind it 20 % of the core's time and more. (The bound was 25 % of
# the window while all waiting counted.) Its own workers and threads queueing for its
# cores, and the generator on an unpinned machine, are the set-up's own, never a cause
# (ServerStats.runnable_per_core shows them).
CONTENDED_WAIT_SHARE = 0.25
CONTENDED_WINDOW_SHARE = 0.15


def merge_outcomes(
    spec: LoadSpec,
    outcomes: Sequence[WorkerOutcome],
    server: ServerStats | None = None,
) -> LoadResult:
    every = outcomes
    # A lost share (its worker left a cluster mid-run) brought back no figures.
    outcomes = [o for o in every if not o.lost] or [WorkerOutcome()]
    latency_counts: Counter[int] = Counter()
    uncorrected_counts: Counter[int] = Counter()
    lower_bound_counts: Counter[int] = Counter()
    lag_counts: Counter[int] = Counter()
    errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
    status_codes: Counter[int] = Counter()
    samples: dict[str, str] = {}
    for out in outcomes:
        latency_counts.update(out.latency_counts)
        uncorrected_counts.update(out.uncorrected_counts)
        lower_bound_counts.update(out.lower_bound_counts)
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
    # Open loop: requests unanswered at the end count at a lower bound (see
    # RunAccounting.stop_counting); they are in the corrected figures, never in ``ok``.
    hist = histogram_from_counts(latency_counts + lower_bound_counts)
    open_loop = spec.rate is not None
    generator = _generator_stats(spec, outcomes, lag_counts, duration_s)
    generator = _with_shares(generator, every, duration_s)
    found = _invalid_reasons(spec, outcomes, generator, duration_s)
    found += _server_reasons(server, duration_s)
    found += [
        (
            "worker_lost",
            f"worker lost mid-run: {o.lost}; the figures are those of the shares that came back",
        )
        for o in every
        if o.lost
    ]
    by_request = _merge_by_request(spec, outcomes, duration_s)
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
        timeline=_merge_timeline([o.seconds for o in outcomes], spec),
        server=server,
        generator=generator,
        valid=not found,
        invalid_reasons=tuple(text for _, text in found),
        invalid_causes=tuple(cause for cause, _ in found),
        error_samples=samples,
        spec=spec,
        latency_histogram=encode_histogram(hist),
        by_request=by_request,
        checks=_merge_checks(spec, outcomes, status_codes, by_request),
        # HTTP requests, and a WebSocket load's opening handshakes (its messages' round
        # trips have no phases, nor an echo's).
        phases=merge_phases(
            [o.phase_counts for o in outcomes], sum(o.waited_for_connection for o in outcomes)
        )
        if spec.kind == "http"
        else merge_phases([upgrade_phases(o.phase_counts) for o in outcomes])
        if spec.kind == "ws"
        else Phases(),
        stream=_stream_stats(outcomes, hist, duration_s),
    )


def _stream_stats(
    outcomes: Sequence[WorkerOutcome], whole: HdrHistogram, duration_s: float
) -> StreamStats | None:
    """A streaming load's figures, every worker's added up (``whole``: the latency's)."""
    merged = merged_streams(o.stream for o in outcomes)
    if merged is None:
        return None
    hists = {
        name: histogram_from_counts(counts)
        for name, counts in (
            ("first_byte", merged.first_byte_counts),
            ("first_event", merged.first_event_counts),
            ("gap", merged.gap_counts),
            ("tpot", merged.tpot_counts),
        )
    }
    counts = merged.events_counts
    ordered = sorted(counts.elements())
    per_stream = EventCounts()
    if ordered:
        per_stream = EventCounts(
            len(ordered),
            ordered[0],
            ordered[(len(ordered) - 1) // 2],
            sum(ordered) / len(ordered),
            ordered[-1],
        )
    return StreamStats(
        mode=merged.mode,
        streams=merged.streams,
        events=merged.events,
        events_per_second=merged.events / duration_s if duration_s > 0 else 0.0,
        first_byte=summarize(hists["first_byte"]),
        first_event=summarize(hists["first_event"]),
        gap=summarize(hists["gap"]),
        whole=summarize(whole),
        events_per_stream=per_stream,
        first_byte_histogram=encode_histogram(hists["first_byte"]),
        first_event_histogram=encode_histogram(hists["first_event"]),
        gap_histogram=encode_histogram(hists["gap"]),
        tpot=summarize(hists["tpot"]),
        output_tokens=merged.tokens,
        output_tokens_per_second=merged.tokens / duration_s if duration_s > 0 else 0.0,
        tpot_histogram=encode_histogram(hists["tpot"]) if merged.tpot_counts else "",
        good_streams=max(merged.good, 0),
        goodput=(merged.good / duration_s if duration_s > 0 else 0.0)
        if merged.good >= 0
        else math.nan,
    )


def _merge_checks(
    spec: LoadSpec,
    outcomes: Sequence[WorkerOutcome],
    status_codes: Mapping[int, int],
    by_request: Mapping[str, RequestStats],
) -> dict[str, CheckStats]:
    """Each check's passes and failures: a check is tested on every measured response of
    the kinds it applies to (all of them outside a mix), so its passes are those responses
    less its failures, which the workers counted."""
    if not spec.checks and not any(r.checks for r in spec.mix):
        return {}
    slots, masks = check_slots(spec.checks, [r.checks for r in spec.mix])
    if spec.mix:
        answered = [sum(by_request[r.label].status_codes.values()) for r in spec.mix]
    else:
        answered = [sum(status_codes.values())]
    merged: dict[str, CheckStats] = {}
    for index, check in enumerate(slots):
        failures = sum(o.check_failures[index] for o in outcomes if index < len(o.check_failures))
        tested = sum(n for n, mask in zip(answered, masks, strict=True) if mask >> index & 1)
        merged[check.name] = CheckStats(check.name, check.expression, tested - failures, failures)
    return merged


def _merge_timeline(
    per_worker: Sequence[Sequence[TimelineBucket]], spec: LoadSpec
) -> tuple[TimelineRow, ...]:
    """Row i sums every worker's bucket i: workers start together (``WorkerShare.start_at``)
    and cut buckets at the same offsets from the start of the window. A load with stages
    gets each row's target: the ramp's mean over the part of the window the row covers."""
    span_s = spec.timeline_resolution_s
    ramp = spec.ramp
    length = max((len(rows) for rows in per_worker), default=0)
    merged: list[TimelineRow] = []
    for index in range(length):
        counts: Counter[int] = Counter()
        ok = errors = 0
        live: list[int | None] = []
        for rows in per_worker:
            if index < len(rows):
                row = rows[index]
                ok += row.ok
                errors += row.errors
                counts.update(row.counts)
                live.append(row.connections)
        p99 = percentile_of_counts(counts, 99.0)
        p50 = percentile_of_counts(counts, 50.0)
        connections = sum(n for n in live if n is not None) if None not in live else None
        target = None
        if ramp is not None:
            begin = ramp.lead_s + index * span_s
            target = ramp.mean(begin, min(begin + span_s, ramp.duration_s))
        histogram = encode_histogram(histogram_from_counts(counts)) if ok else ""
        merged.append(
            TimelineRow(
                index,
                ok,
                errors,
                p99,
                p50,
                span_s,
                connections=connections,
                target=target,
                latency_histogram=histogram,
            )
        )
    return tuple(merged)


def _merge_by_request(
    spec: LoadSpec, outcomes: Sequence[WorkerOutcome], duration_s: float
) -> dict[str, RequestStats]:
    """Each kind of a mix, summed over the workers (each ran the whole mix)."""
    merged: dict[str, RequestStats] = {}
    for index, request in enumerate(spec.mix):
        parts = [o.by_request[index] for o in outcomes if index < len(o.by_request)]
        counts: Counter[int] = Counter()
        errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
        status_codes: Counter[int] = Counter()
        for part in parts:
            counts.update(part.latency_counts)
            status_codes.update(part.status_codes)
            for kind, n in part.errors.items():
                errors[kind] += n
        hist = histogram_from_counts(counts)
        merged[request.label] = RequestStats(
            name=request.label,
            method=request.method,
            path=request.path,
            duration_s=duration_s,
            sent=sum(p.sent for p in parts),
            ok=sum(counts.values()),
            errors=errors,
            in_flight=sum(p.in_flight for p in parts),
            status_codes=dict(sorted(status_codes.items())),
            latency=summarize(hist),
            latency_histogram=encode_histogram(hist),
            phases=merge_phases([part.phase_counts for part in parts]),
        )
    return merged


def upgrade_phases(counts: Mapping[str, Counter[int]]) -> dict[str, Counter[int]]:
    """A WebSocket load's phases: its connections' connect and TLS, and their opening
    handshakes' wait and receive."""
    return {
        "connect": counts.get("connect", Counter()),
        "tls": counts.get("tls", Counter()),
        "wait": counts.get(UPGRADE_WAIT, Counter()),
        "receive": counts.get(UPGRADE_RECEIVE, Counter()),
    }


def merge_phases(parts: Sequence[Mapping[str, Counter[int]]], waited: int = 0) -> Phases:
    """Each phase's counts summed over the shares, as histograms and their summaries."""
    summaries: dict[str, LatencySummary] = {}
    encoded: dict[str, str] = {}
    for name in PHASES:
        counts: Counter[int] = Counter()
        for part in parts:
            counts.update(part.get(name, ()))
        if counts:
            hist = histogram_from_counts(counts)
            summaries[name] = summarize(hist)
            encoded[name] = encode_histogram(hist)
    return Phases(**summaries, waited_for_connection=waited, histograms=encoded)


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
    # The achieved rate is of the sends inside the window, not of those the drain made.
    sent = sum(o.sent - o.sent_after_window for o in outcomes)
    return GeneratorStats(
        workers=len(outcomes),
        loop=outcomes[0].loop if outcomes else "",
        protocol=spec.protocol if spec.kind == "http" else "",
        cpu_s=cpu_s,
        cpu_percent=100.0 * busiest_cpu / duration_s if duration_s > 0 else 0.0,
        busy_percent=100.0 * busiest / duration_s if duration_s > 0 else 0.0,
        connections_opened=sum(o.connections_opened for o in outcomes),
        connections_peak=sum(o.connections_peak for o in outcomes),
        intended_rate=_intended_rate(spec),
        achieved_rate=sent / duration_s if open_loop and duration_s > 0 else None,
        send_lag_p99_ms=percentile_of_counts(lag_counts, 99.0) if open_loop else None,
        send_lag_max_ms=(max(lag_counts) / 1000.0 if lag_counts else 0.0) if open_loop else None,
        late_sends=sum(o.late_sends for o in outcomes),
        sent_after_window=sum(o.sent_after_window for o in outcomes),
        lower_bounds=sum(sum(o.lower_bound_counts.values()) for o in outcomes),
        unsent=sum(o.unsent for o in outcomes),
        feeders_ran_out=any(o.feeders_ran_out for o in outcomes),
        connections_without_exchange=_sum_known([o.connections_without_exchange for o in outcomes]),
        **_connect_phase_stats(outcomes),
    )


def _intended_rate(spec: LoadSpec) -> float | None:
    """The rate asked for; a ramp's mean over the window (the requests it holds there,
    a second), so the achieved rate compares with it as with a constant one."""
    ramp = spec.ramp
    if ramp is None or spec.rate is None:
        return spec.rate
    return ramp.mean(ramp.lead_s, ramp.duration_s)


def _with_shares(
    generator: GeneratorStats, outcomes: Sequence[WorkerOutcome], duration_s: float
) -> GeneratorStats:
    """Each share's host, cost and own figures when the shares ran on a cluster, and how
    far apart their windows opened."""
    if not any(o.host or o.lost for o in outcomes):
        return generator
    starts = [o.window_start_ns for o in outcomes if not o.lost]
    first = min(starts, default=0)
    shares = tuple(_share(index, o, duration_s, first) for index, o in enumerate(outcomes))
    spread = (max(starts) - first) / 1e6 if starts else None
    return dataclasses.replace(generator, shares=shares, start_spread_ms=spread)


def _share(index: int, o: WorkerOutcome, duration_s: float, first_start_ns: int) -> ShareStats:
    """One share's figures, from its outcome alone (its histogram is its part of the
    load's: the same counts the merge adds up)."""
    if o.lost:
        errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
        return ShareStats(index=index, host=o.host, worker=o.worker, lost=o.lost, errors=errors)
    hist = histogram_from_counts(o.latency_counts + o.lower_bound_counts)
    busy = 100.0 * max(o.busy_s, o.cpu_s) / duration_s if duration_s > 0 else 0.0
    return ShareStats(
        index=index,
        host=o.host,
        worker=o.worker,
        cpu_percent=100.0 * o.cpu_s / duration_s if duration_s > 0 else 0.0,
        busy_percent=busy,
        saturated=_saturated(busy, duration_s),
        sent=o.sent,
        ok=sum(o.latency_counts.values()),
        errors={kind: o.errors.get(kind, 0) for kind in ERROR_KINDS},
        in_flight=o.in_flight,
        latency=summarize(hist),
        start_offset_ms=(o.window_start_ns - first_start_ns) / 1e6,
        latency_histogram=encode_histogram(hist),
    )


def _saturated(busy_percent: float, duration_s: float) -> bool:
    """The generator-saturation rule, for the busiest worker and for each share."""
    return duration_s >= 0.2 and busy_percent >= SATURATED_CPU_SHARE * 100


def _saturation_reason(generator: GeneratorStats) -> str:
    """Which worker saturated; on a cluster, which shares did (host and worker) and, when
    others did not, that only those hosts set the pace."""
    running = [share for share in generator.shares if not share.lost]
    hot = [share for share in running if share.saturated]
    if not hot:  # local workers: one figure, the busiest
        return (
            f"generator saturated: a worker was running or waiting for a CPU"
            f" {min(generator.busy_percent, 100):.0f}% of the time (cpu"
            f" {generator.cpu_percent:.0f}%), so the figures may measure the generator rather"
            " than the server: add workers or cores, or lower the load"
        )
    which = "; ".join(
        f"share {s.index} on {s.host} ({s.worker}) {min(s.busy_percent, 100):.0f}%"
        f" (cpu {s.cpu_percent:.0f}%)"
        for s in hot
    )
    text = f"generator saturated: running or waiting for a CPU most of the window: {which}"
    cool = [share for share in running if not share.saturated]
    if not cool:
        return text + (
            ", so the figures may measure the generator rather than the server: add workers"
            " or cores, or lower the load"
        )
    others = ", ".join(f"share {s.index} on {s.host} busy {s.busy_percent:.0f}%" for s in cool)
    hosts = "that host" if len({s.host for s in hot}) == 1 else "those hosts"
    were = "the other share was" if len(cool) == 1 else "the other shares were"
    return text + (
        f"; {were} not ({others}), so {hosts}, not the server, set the pace of"
        f" {'its share' if len(hot) == 1 else 'their shares'}: give each worker a core of its"
        " own (nothing else running there), add workers, or lower the load"
    )


def _sum_known(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _connect_phase_stats(outcomes: Sequence[WorkerOutcome]) -> dict[str, Any]:
    """The connect-first figures of the shares that opened their connections first."""
    phased = [o for o in outcomes if o.connect_first]
    if not phased:
        return {}
    counts: Counter[int] = Counter()
    for o in phased:
        counts.update(o.connect_counts)
    return {
        "connect_first": True,
        "connections_ready": sum(o.connections_ready for o in phased),
        "connect_failures": sum(o.connect_failures for o in phased),
        "connect_failure_sample": next(
            (o.connect_failure_sample for o in phased if o.connect_failure_sample), ""
        ),
        "connect_s": max(o.connect_phase_ns for o in phased) / 1e9,
        "connect_p50_ms": percentile_of_counts(counts, 50.0) if counts else None,
        "connect_p99_ms": percentile_of_counts(counts, 99.0) if counts else None,
        "connect_max_ms": max(counts) / 1000.0 if counts else None,
    }


def _invalid_reasons(
    spec: LoadSpec,
    outcomes: Sequence[WorkerOutcome],
    generator: GeneratorStats,
    duration_s: float,
) -> list[tuple[InvalidCause, str]]:
    """Each reason the figures cannot be trusted, as (cause kind, text for people)."""
    reasons: list[tuple[InvalidCause, str]] = []
    faults = sum(o.generator_faults for o in outcomes)
    if faults:
        reasons.append(
            (
                "generator_fds",
                f"generator ran out of file descriptors or local ports ({faults} failed connects):"
                " raise `ulimit -n`, lower connections, or enable keep-alive",
            )
        )
    if generator.connect_first and generator.connections_ready < spec.connections:
        failed = ""
        if generator.connect_failures:
            failed = f" ({generator.connect_failures:,} connects failed: "
            failed += f"{generator.connect_failure_sample})"
        hint = (
            "is the server at its open-files limit or accept backlog? (see"
            " generator.listen_overflows and the server's fds)"
        )
        sample = generator.connect_failure_sample
        if "handshake refused" in sample or "WebSocket handshake" in sample:
            hint = "the server did not accept the WebSocket handshake (see the failure named)"
        reasons.append(
            (
                "connections_not_opened",
                f"connections not opened before the window: {generator.connections_ready:,} of"
                f" {spec.connections:,}{failed}, so the window held fewer than asked for: {hint}",
            )
        )
    if _saturated(generator.busy_percent, duration_s):
        reasons.append(("generator_saturated", _saturation_reason(generator)))
    if spec.rate is not None:
        scheduled = sum(o.scheduled for o in outcomes)
        # Still waiting for a connection when the window closed: never sent, or sent by
        # the drain after it.
        unsent = generator.unsent + generator.sent_after_window
        if unsent > MAX_UNSENT_SHARE * scheduled + 1:
            if generator.connections_peak >= spec.pool_limit:
                reasons.append(
                    (
                        "rate_not_achieved",
                        f"rate not achieved: {unsent} of {scheduled} scheduled requests"
                        " were not sent inside the window (connection pool limit"
                        f" {spec.pool_limit} reached while the server fell behind): raise"
                        " max_connections or lower the rate",
                    )
                )
            else:
                # The pool was below its bound: the requests waited on the generator (its
                # connections still opening, or its pool not grown yet), not on the server.
                reasons.append(
                    (
                        "schedule_lag",
                        f"generator fell behind its schedule: {unsent} of {scheduled}"
                        " scheduled requests were still waiting for a connection when the window"
                        f" closed ({generator.connections_peak} open, below the pool bound of"
                        f" {spec.pool_limit}): raise connections, add workers or lower the rate",
                    )
                )
        lag = generator.send_lag_p99_ms
        if lag is not None and lag > MAX_SCHEDULE_LAG_P99_MS:
            reasons.append(
                (
                    "schedule_lag",
                    f"generator fell behind its schedule: send lag p99 {lag:.1f} ms: add"
                    " workers or lower the rate",
                )
            )
    return reasons


def _server_reasons(
    server: ServerStats | None, duration_s: float
) -> list[tuple[InvalidCause, str]]:
    """Why the managed server's figures measure the host rather than the server."""
    if server is None or duration_s < 0.2:
        return []
    waited = server.contended_wait_s
    if math.isnan(waited):
        return []
    span = server.sampled_s if server.sampled_s > 0 else duration_s
    capacity = span * max(1, len(server.cpus))
    wanted = server.cpu_s + server.cpu_wait_s
    share = waited / wanted if wanted > 0 else 0.0
    if not (share >= CONTENDED_WAIT_SHARE and waited >= CONTENDED_WINDOW_SHARE * capacity):
        return []
    return [("host_contention", _contention_reason(server, share))]


def _contention_reason(server: ServerStats, share: float) -> str:
    """``host contention: other processes took 41% of the server's CPUs (core 1) ...``"""
    cores = ",".join(map(str, server.cpus))
    which = f"core{'s' if len(server.cpus) > 1 else ''} {cores}"
    return (
        f"host contention: other processes took {server.host_other_share:.0%} of the"
        f" server's CPUs ({which}: {server.host_other_cpu_s:.2f} s of CPU in"
        f" {server.sampled_s:.2f} s) and the server waited behind them about"
        f" {server.contended_wait_s:.2f} s, {share:.0%} of the time it wanted a CPU, so the"
        " figures measure the host as much as the server: stop them, or pin the server away"
        f" from them (server cpus=...; it ran on {which}) and the load on other CPUs (load"
        " cpus=...)"
    )


def summarize(hist: HdrHistogram) -> LatencySummary:
    total = int(hist.get_total_count())
    if total == 0:
        return LatencySummary()
    values = values_at_percentiles(hist, (50.0, 75.0, 90.0, 95.0, 99.0, 99.9))
    mean_us, stdev_us = mean_and_stdev_us(hist)
    return LatencySummary(
        count=total,
        p50_ms=values[50.0] / 1000.0,
        p75_ms=values[75.0] / 1000.0,
        p90_ms=values[90.0] / 1000.0,
        p95_ms=values[95.0] / 1000.0,
        p99_ms=values[99.0] / 1000.0,
        p999_ms=values[99.9] / 1000.0,
        min_ms=hist.get_min_value() / 1000.0,
        max_ms=hist.get_max_value() / 1000.0,
        mean_ms=mean_us / 1000.0,
        stdev_ms=stdev_us / 1000.0,
    )
