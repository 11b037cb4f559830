"""Merging worker outcomes is lossless, and the validity judgement says why it fails."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._stats.histogram import histogram_floor
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import Recorder, TimelineBucket, WorkerOutcome

NS = 1_000_000_000
START = 10 * NS
SPEC = LoadSpec(kind="http", host="127.0.0.1", port=8080, requests=1000)
OPEN_SPEC = LoadSpec(kind="http", host="127.0.0.1", port=8080, duration_s=3.0, rate=1000.0)


def traffic(seed: int, seconds: int = 3, per_second: int = 400) -> list[list[tuple]]:
    """Per second: events ("ok", latency_ns, status) or ("error", kind)."""
    rng = random.Random(seed)
    out = []
    for _ in range(seconds):
        events: list[tuple] = []
        for _ in range(per_second):
            roll = rng.random()
            if roll < 0.02:
                events.append(("error", rng.choice(["reset", "timeout", "protocol"])))
            elif roll < 0.05:
                events.append(("status", 503))
            else:
                events.append(("ok", int(rng.lognormvariate(13, 1)), 200))
        out.append(events)
    return out


def record(
    seconds: list[list[tuple]], *, share: int = 0, of: int = 1, open_loop: bool = False
) -> WorkerOutcome:
    """Replay every `of`-th event (offset `share`) into a real Recorder, ticking per second."""
    rec = Recorder(START, open_loop=open_loop)
    index = 0
    for events in seconds:
        for event in events:
            index += 1
            if index % of != share:
                continue
            rec.sent += 1
            rec.bytes_written += 100
            if event[0] == "ok":
                rec.latencies.append(event[1])
                rec.status_codes[200] = rec.status_codes.get(200, 0) + 1
                rec.bytes_read += 50
                if open_loop:
                    rec.uncorrected.append(event[1] // 2)
                    rec.lags.append(event[1] // 100)
            elif event[0] == "status":
                rec.status_codes[503] = rec.status_codes.get(503, 0) + 1
                rec.error("status", "HTTP 503")
            else:
                rec.error(event[1], f"{event[1]} happened")
        rec.tick()
    return rec.finish(in_flight=0, window_end_ns=START + len(seconds) * NS)


@pytest.mark.parametrize("workers", [2, 3])
def test_merge_of_split_workers_equals_one_worker(workers: int) -> None:
    seconds = traffic(seed=workers)
    single = merge_outcomes(SPEC, [record(seconds)])
    split = merge_outcomes(SPEC, [record(seconds, share=i, of=workers) for i in range(workers)])
    for name in ("sent", "ok", "in_flight", "bytes_read", "bytes_written", "duration_s"):
        assert getattr(split, name) == getattr(single, name), name
    assert split.errors == single.errors
    assert split.status_codes == single.status_codes
    assert split.latency == single.latency
    assert split.timeline == single.timeline
    assert split.latency_histogram == single.latency_histogram
    for q in (50, 99, 99.9, 100):
        assert split.percentile(q) == single.percentile(q)
    assert split.generator.workers == workers


def test_merge_of_open_loop_workers_keeps_both_histograms() -> None:
    seconds = traffic(seed=9)
    single = merge_outcomes(OPEN_SPEC, [record(seconds, open_loop=True)])
    split = merge_outcomes(
        OPEN_SPEC, [record(seconds, share=i, of=2, open_loop=True) for i in range(2)]
    )
    assert single.mode == split.mode == "open"
    assert split.latency == single.latency
    assert split.uncorrected == single.uncorrected
    assert split.uncorrected is not None
    assert split.uncorrected.count == split.ok
    assert split.generator.send_lag_p99_ms == single.generator.send_lag_p99_ms
    assert split.generator.achieved_rate == pytest.approx(split.sent / split.duration_s)


def test_merged_counts_are_sums_and_the_invariant_holds() -> None:
    seconds = traffic(seed=11)
    outcomes = [record(seconds, share=i, of=2) for i in range(2)]
    result = merge_outcomes(SPEC, outcomes)
    assert result.sent == sum(o.sent for o in outcomes)
    assert result.sent == result.ok + result.errors_total + result.in_flight
    assert sum(result.status_codes.values()) == result.ok + result.errors["status"]
    assert result.latency.count == result.ok
    flat = [e for events in seconds for e in events]
    assert result.ok == sum(1 for e in flat if e[0] == "ok")
    assert result.errors["status"] == sum(1 for e in flat if e[0] == "status")
    assert result.error_samples["status"] == "HTTP 503"


def test_timeline_has_one_row_per_second_with_that_seconds_figures() -> None:
    seconds = traffic(seed=12)
    result = merge_outcomes(SPEC, [record(seconds)])
    assert [row.second for row in result.timeline] == [0, 1, 2]
    for row, events in zip(result.timeline, seconds, strict=True):
        oks = sorted(histogram_floor(e[1] // 1000) for e in events if e[0] == "ok")
        assert row.ok == len(oks)
        assert row.errors == sum(1 for e in events if e[0] != "ok")
        rank = -(-99 * len(oks) // 100)  # ceil(0.99 n)
        assert row.p99_ms == oks[rank - 1] / 1000


def test_timeline_of_workers_with_different_lengths() -> None:
    a = WorkerOutcome(
        seconds=[TimelineBucket(5, 0, Counter({1000: 5})), TimelineBucket(5, 1, Counter())]
    )
    b = WorkerOutcome(seconds=[TimelineBucket(3, 2, Counter({3000: 3}))])
    for outcome in (a, b):
        outcome.window_start_ns, outcome.window_end_ns = START, START + 2 * NS
    result = merge_outcomes(SPEC, [a, b])
    assert [(r.second, r.ok, r.errors) for r in result.timeline] == [(0, 8, 2), (1, 5, 1)]
    assert result.timeline[0].p99_ms == 3.0


def test_duration_is_the_union_of_the_worker_windows() -> None:
    a = WorkerOutcome(window_start_ns=START, window_end_ns=START + 2 * NS)
    b = WorkerOutcome(window_start_ns=START + NS // 2, window_end_ns=START + 3 * NS)
    assert merge_outcomes(SPEC, [a, b]).duration_s == 3.0


def outcome(**fields: object) -> WorkerOutcome:
    out = WorkerOutcome(window_start_ns=START, window_end_ns=START + NS, **fields)  # type: ignore[arg-type]
    return out


def test_healthy_run_is_valid() -> None:
    result = merge_outcomes(SPEC, [outcome(cpu_s=0.3, busy_s=0.4)])
    assert result.valid
    assert result.invalid_reasons == ()


def test_generator_fd_or_port_exhaustion_is_invalid() -> None:
    result = merge_outcomes(SPEC, [outcome(generator_faults=3)])
    assert not result.valid
    assert "file descriptors" in result.invalid_reasons[0]


def test_saturated_generator_is_invalid_and_says_what_to_do() -> None:
    result = merge_outcomes(SPEC, [outcome(cpu_s=0.7, busy_s=0.95)])
    assert not result.valid
    (reason,) = result.invalid_reasons
    assert "saturated" in reason
    assert "add workers" in reason
    assert result.generator.busy_percent == pytest.approx(95.0)
    assert result.generator.cpu_percent == pytest.approx(70.0)


def test_very_short_runs_are_not_judged_saturated() -> None:
    short = WorkerOutcome(window_start_ns=START, window_end_ns=START + NS // 10, busy_s=0.1)
    assert merge_outcomes(SPEC, [short]).valid


def test_open_loop_that_left_requests_unsent_is_invalid() -> None:
    full = OPEN_SPEC.pool_limit
    result = merge_outcomes(
        OPEN_SPEC, [outcome(scheduled=1000, unsent=50, sent=950, connections_peak=full)]
    )
    assert not result.valid
    assert result.invalid_causes == ("rate_not_achieved",)  # the pool was full: the server
    assert any("rate not achieved" in r for r in result.invalid_reasons)
    assert result.generator.unsent == 50


def test_requests_unsent_below_the_pool_bound_are_the_generators_doing() -> None:
    result = merge_outcomes(
        OPEN_SPEC, [outcome(scheduled=1000, unsent=50, sent=950, connections_peak=4)]
    )
    assert result.invalid_causes == ("schedule_lag",)
    assert result.invalid_by_generator_only  # so a retry may run it again
    (reason,) = result.invalid_reasons
    assert "50 of 1000 scheduled requests were still waiting for a connection" in reason
    assert "4 open, below the pool bound of 1024" in reason


def test_lower_bounds_are_in_the_corrected_percentiles_but_not_in_ok() -> None:
    # Issue 20, item 9: 90 answers of 1 ms and 10 requests unanswered at the end, at least
    # 200 ms each: the corrected p95 is theirs, as it would be had the run waited for them.
    answered = outcome(
        sent=100,
        in_flight=10,
        latency_counts=Counter({1_000: 90}),
        uncorrected_counts=Counter({1_000: 90}),
        lower_bound_counts=Counter({200_000: 10}),
        scheduled=100,
    )
    result = merge_outcomes(OPEN_SPEC, [answered])
    assert result.ok == 90
    assert result.latency.count == 100
    assert result.p50_ms == 1.0
    assert result.p95_ms == pytest.approx(200.0, rel=1e-3)
    assert result.uncorrected is not None and result.uncorrected.count == 90
    assert result.generator.lower_bounds == 10
    split = merge_outcomes(
        OPEN_SPEC,
        [
            outcome(latency_counts=Counter({1_000: 90}), lower_bound_counts=Counter({200_000: 4})),
            outcome(lower_bound_counts=Counter({200_000: 6})),
        ],
    )
    assert split.latency_histogram == result.latency_histogram
    assert split.generator.lower_bounds == 10


def test_sends_the_drain_made_count_as_sent_but_not_in_the_achieved_rate() -> None:
    drained = outcome(scheduled=1000, sent=1000, sent_after_window=40, connections_peak=10)
    result = merge_outcomes(OPEN_SPEC, [drained])
    assert result.sent == 1000
    assert result.generator.sent_after_window == 40
    assert result.generator.achieved_rate == pytest.approx(960.0)
    # Waiting for a connection when the window closed, as before the drain sent them.
    assert result.invalid_causes == ("schedule_lag",)
    assert "40 of 1000 scheduled requests were still waiting" in result.invalid_reasons[0]


def test_open_loop_that_fell_behind_schedule_is_invalid() -> None:
    result = merge_outcomes(OPEN_SPEC, [outcome(lag_counts=Counter({50_000: 10}), scheduled=10)])
    assert not result.valid
    assert any("behind its schedule" in r for r in result.invalid_reasons)
    assert result.generator.send_lag_p99_ms == 50.0
    assert result.generator.send_lag_max_ms == 50.0


def test_closed_loop_has_no_rate_figures() -> None:
    result = merge_outcomes(SPEC, [outcome(sent=10)])
    assert result.mode == "closed"
    assert result.uncorrected is None
    assert result.generator.achieved_rate is None
    assert result.generator.send_lag_p99_ms is None


def test_timeline_rows_carry_their_span_and_median() -> None:
    spec = LoadSpec(kind="http", host="127.0.0.1", port=8080, timeline_resolution_s=0.1)
    a = WorkerOutcome(seconds=[TimelineBucket(3, 0, Counter({1000: 2, 9000: 1}))])
    b = WorkerOutcome(
        seconds=[TimelineBucket(2, 1, Counter({2000: 2})), TimelineBucket(0, 0, Counter())]
    )
    for out in (a, b):
        out.window_start_ns, out.window_end_ns = START, START + NS // 5
    rows = merge_outcomes(spec, [a, b]).timeline
    assert [(r.second, r.ok, r.errors, r.span_s) for r in rows] == [(0, 5, 1, 0.1), (1, 0, 0, 0.1)]
    assert rows[0].p50_ms == 2.0  # of 1, 1, 2, 2, 9 ms
    assert rows[0].rate == pytest.approx(50.0)
    assert rows[1].start_s == pytest.approx(0.1)


MIX_SPEC = LoadSpec(
    kind="http",
    host="127.0.0.1",
    port=8080,
    duration_s=1.0,
    mix=(Request("GET", "/a", name="a"), Request("POST", "/b", name="b")),
)


def mix_worker(
    latencies: dict[int, list[int]], failures: dict[int, int], in_flight: list[int]
) -> WorkerOutcome:
    """One worker of a two-kind mix: ok latencies (ns) and reset failures per kind."""
    rec = Recorder(START, open_loop=False, request_kinds=2)
    for kind, samples in latencies.items():
        rec.by_request[kind].latencies.extend(samples)
        rec.by_request[kind].status_codes[200] = len(samples)
        rec.by_request[kind].sent += len(samples)
        rec.sent += len(samples)
    for kind, n in failures.items():
        for _ in range(n):
            rec.error("reset", "connection reset by peer", request_kind=kind)
            rec.by_request[kind].sent += 1
            rec.sent += 1
    for kind, n in enumerate(in_flight):
        rec.by_request[kind].sent += n
        rec.sent += n
    return rec.finish(
        in_flight=sum(in_flight), window_end_ns=START + NS, in_flight_by_request=in_flight
    )


def test_a_mix_merges_per_kind_exactly_and_the_totals_add_up() -> None:
    one = mix_worker({0: [1_000_000] * 3, 1: [5_000_000, 7_000_000]}, {1: 1}, [1, 0])
    two = mix_worker({0: [2_000_000], 1: [6_000_000]}, {0: 2}, [0, 2])
    result = merge_outcomes(MIX_SPEC, [one, two])
    a, b = result.by_request["a"], result.by_request["b"]
    assert list(result.by_request) == ["a", "b"]
    assert (a.sent, a.ok, a.errors_total, a.in_flight) == (7, 4, 2, 1)
    assert (b.sent, b.ok, b.errors_total, b.in_flight) == (6, 3, 1, 2)
    for kind in (a, b):
        assert kind.sent == kind.ok + kind.errors_total + kind.in_flight
    # Exact to HdrHistogram's 3 significant digits.
    assert a.percentile(100) == pytest.approx(2.0, rel=1e-3)
    assert b.percentile(50) == pytest.approx(6.0, rel=1e-3)
    assert (a.method, b.method, b.path) == ("GET", "POST", "/b")
    # The totals are the kinds' sums: latencies, statuses, errors, in flight.
    assert result.ok == a.ok + b.ok
    assert result.status_codes == {200: 7}
    assert result.errors["reset"] == 3
    assert result.in_flight == 3
    assert sum(row.ok for row in result.timeline) == result.ok
    assert result.latency.max_ms == pytest.approx(7.0, rel=1e-3)


def test_a_mix_result_survives_its_json_form() -> None:
    from pytest_netbench._model import LoadResult

    result = merge_outcomes(MIX_SPEC, [mix_worker({0: [1_000_000], 1: [3_000_000]}, {}, [0, 0])])
    back = LoadResult.from_dict(result.to_dict())
    assert back.by_request == result.by_request
    assert back.by_request["b"].percentile(99) == pytest.approx(3.0, rel=1e-3)
    assert result.to_dict()["spec"]["mix"][1] == {
        "name": "b",
        "method": "POST",
        "path": "/b",
        "headers": [],
        "body": 0,
        "weight": 1,
    }
