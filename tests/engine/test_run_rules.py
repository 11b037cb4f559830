"""The run rules (``accounting``, ``open_rules``) and the asyncio hot path that inlines them.

``Connection.on_response`` records a response with ``RunAccounting.record`` written out in
place (a call per response costs more than the rest of it); these tests feed the same
responses to both and require the same counts. No sockets are needed: the connection's
recording happens before it would write anything.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from time import monotonic_ns

import pytest

from pytest_netbench._engine.asyncio_io.connection import Connection
from pytest_netbench._engine.asyncio_io.engine import ClosedRun, OpenRun
from pytest_netbench._engine.rules.accounting import RunAccounting
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.open_rules import OpenAccounting
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._input.spec import echo_spec, http_spec
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import Recorder

START = 10 * NS_PER_S  # a start instant long past, so every response is "now"
WARMUP_S = 1.0
MEASURE = START + int(WARMUP_S * NS_PER_S)

# (code, start, intended): warm-up, on time, sent early (batched), late, errors
HTTP_RESPONSES = [
    (200, START, START),
    (200, MEASURE + 5, MEASURE + 5),
    (200, MEASURE + 5, MEASURE + 9),
    (200, MEASURE + 9, MEASURE + 1),
    (404, MEASURE + 2, MEASURE + 2),
    (503, START, START),
    (204, MEASURE, MEASURE),
]
ECHO_RESPONSES = [(0, START, START), (0, MEASURE, MEASURE), (-1, MEASURE, MEASURE)]


class _Slot:
    def __init__(self) -> None:
        self.pending: deque[int] = deque()
        self.intended: deque[int] = deque()


class _Rules(OpenAccounting):
    def stop(self) -> None:
        self.stop_counting([])


def _spec(kind: str, rate: float | None) -> LoadSpec:
    if kind == "http":
        return http_spec("http://127.0.0.1:9/", rate=rate, warmup=WARMUP_S)
    return echo_spec("127.0.0.1", 9, payload=b"ping", rate=rate, warmup=WARMUP_S)


def _summary(rec: Recorder, completed: int) -> tuple[object, ...]:
    # Each latency rounded to whole seconds: both sides take "now" a moment apart.
    return (
        dict(rec.status_codes),
        dict(rec.errors),
        completed,
        [round(v / NS_PER_S) for v in rec.latencies],
        [round(v / NS_PER_S) for v in rec.uncorrected],
    )


@pytest.fixture
def event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.mark.parametrize("rate", [None, 100.0], ids=["closed", "open"])
@pytest.mark.parametrize("kind", ["http", "echo"])
def test_the_connection_records_as_the_rule_does(
    event_loop: asyncio.AbstractEventLoop, kind: str, rate: float | None
) -> None:
    spec = _spec(kind, rate)
    responses = HTTP_RESPONSES if kind == "http" else ECHO_RESPONSES
    share = split_load(spec)[0]
    exchange = build_exchange(spec)
    args = (event_loop, spec, exchange, share, START, None)
    run = ClosedRun(*args) if rate is None else OpenRun(*args)
    rules = _Rules(spec, share, exchange, START)
    conn = Connection(run)  # the general connection, as TCP and HEAD runs use
    for code, start, intended in responses:
        conn.pending.append(start)
        if rate is not None:
            conn.intended.append(intended)
        conn.on_response(code, False)
        rules.record(code, start, intended if rate is not None else start, monotonic_ns())
    assert _summary(run.recorder, run.completed) == _summary(rules.recorder, rules.completed)
    assert rules.completed == sum(1 for _, _, t in responses if t >= MEASURE)
    run.stop()
    # After stop() nothing more is recorded, on either side: it was counted in flight.
    conn.pending.append(MEASURE)
    conn.intended.append(MEASURE)
    conn.on_response(200 if kind == "http" else 0, False)
    rules.stop()
    rules.record(200 if kind == "http" else 0, MEASURE, MEASURE, monotonic_ns())
    assert _summary(run.recorder, run.completed) == _summary(rules.recorder, rules.completed)


def test_failures_count_measured_requests_once_and_never_after_stop() -> None:
    spec = _spec("http", None)
    share = split_load(spec)[0]
    rules = _Rules(spec, share, build_exchange(spec), START)
    slot = _Slot()
    slot.pending.extend([START, MEASURE, MEASURE + 1])
    rules.fail_outstanding(slot, "reset", "connection reset by peer")
    assert rules.recorder.errors["reset"] == 2
    assert rules.completed == 2
    assert not slot.pending
    slot.pending.extend([MEASURE, MEASURE])
    assert rules.stop_counting([slot]) is True
    assert rules.in_flight == 2
    rules.fail_outstanding(slot, "reset", "connection reset by peer")
    assert rules.recorder.errors["reset"] == 2  # in flight already, not an error too
    assert rules.stop_counting([slot]) is False


def test_a_request_budget_ends_the_schedule() -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=1000.0, requests=3, warmup=WARMUP_S)
    share = split_load(spec)[0]
    rules = _Rules(spec, share, build_exchange(spec), START)
    # Everything up to 1.01 s is due: 1,000 warm-up requests, then the 3 of the budget.
    due = rules.collect_due(MEASURE + 10 * 1_000_000, MEASURE + 10 * 1_000_000)
    assert len(due) == 1000 + 3
    assert sum(1 for t in due if t >= MEASURE) == 3
    assert rules.scheduled == 3 and len(rules.recorder.lags) == 3
    assert rules.schedule_done
    assert rules.collect_due(MEASURE + NS_PER_S, MEASURE + NS_PER_S) == []


def test_waiting_requests_are_unsent_until_they_leave_late() -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=100.0, duration=1.0)
    share = split_load(spec)[0]
    rules = _Rules(spec, share, build_exchange(spec), START)
    rules.queue_waiting(START)
    rules.queue_waiting(START + 1)
    rules.leave_waiting(START, late=True)
    outcome = rules.finish("test")
    assert (outcome.sent, outcome.unsent, outcome.late_sends) == (1, 1, 1)


def test_requests_unanswered_at_the_end_count_at_a_lower_bound() -> None:
    # Issue 20, item 9: a request still out (or never sent) when an open-loop run stops is
    # in the corrected latency at (stop - due time), not left out of it.
    spec = http_spec("http://127.0.0.1:9/", rate=100.0, duration=1.0, warmup=WARMUP_S)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    slot = _Slot()
    # A warm-up request, one sent 5 ns late, one sent 10 ns early (timed from its send).
    slot.pending.extend([START, MEASURE + 5, MEASURE + 20])
    slot.intended.extend([START, MEASURE, MEASURE + 30])
    rules.recorder.sent = 2
    rules.queue_waiting(MEASURE + 40)
    before = monotonic_ns()
    assert rules.stop_counting([slot], [START + 1, MEASURE + 40])
    after = monotonic_ns()
    froms = [MEASURE + 40, MEASURE + 20, MEASURE]
    bounds = sorted(rules.recorder.lower_bounds)
    assert len(bounds) == 3
    for bound, since in zip(bounds, froms, strict=True):
        assert before - since <= bound <= after - since
    outcome = rules.finish("test")
    assert (outcome.sent, outcome.in_flight, outcome.unsent) == (2, 2, 1)
    assert sum(outcome.lower_bound_counts.values()) == 3
    assert not outcome.latency_counts  # not answers: no `ok`, no timeline row


def test_a_closed_loop_stop_records_no_lower_bounds() -> None:
    spec = _spec("http", None)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    slot = _Slot()
    slot.pending.extend([MEASURE, MEASURE + 1])
    assert rules.stop_counting([slot])
    assert rules.in_flight == 2
    assert not rules.recorder.lower_bounds


def test_the_drain_sends_what_still_waits_and_ends_when_all_is_answered() -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=100.0, duration=1.0)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    rules.count_sent(START)
    rules.queue_waiting(START + 1)  # due in a stall: every connection was held
    assert rules.close_window() is True  # one out, one waiting: the drain begins
    rules.record(200, START, START, monotonic_ns())
    rules.check_finished()
    assert not rules.stopping  # one request of the window still waits for a connection
    rules.leave_waiting(START + 1, late=True)  # a connection came free in the drain
    rules.check_finished()
    assert not rules.stopping  # ... and its answer is awaited
    rules.record(200, monotonic_ns(), START + 1, monotonic_ns())
    rules.check_finished()
    assert rules.stopping
    outcome = rules.finish("test")
    assert (outcome.sent, outcome.unsent, outcome.late_sends) == (2, 0, 1)
    assert outcome.sent_after_window == 1
    assert not outcome.lower_bound_counts
    assert sum(outcome.latency_counts.values()) == 2


def test_without_a_drain_the_window_close_stops_with_what_waits_unsent() -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=100.0, duration=1.0, drain=False)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    rules.queue_waiting(START + 1)
    assert rules.close_window() is False
    assert rules.stopping


def test_the_deadline_collects_what_fell_due_inside_the_window_only() -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=1000.0, duration=1.0)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    rules.collect_due(START, START + NS_PER_S - 3_000_000)  # the last wake-up was late
    late = rules.due_by_deadline(START + NS_PER_S + 2_000_000)
    assert late == [START + NS_PER_S - 2_000_000, START + NS_PER_S - 1_000_000]
    assert rules.scheduled == 1000  # 0 .. 999 ms; the one due at the deadline is not


def test_the_pool_may_grow_to_what_the_rate_needs_by_the_median_answer() -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=1000.0, duration=1.0, connections=1)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    ms = 1_000_000
    assert not rules.grows_at_once()  # keep-alive: a request waits for a busy connection
    assert rules.pool_wanted() is None  # no answers yet: only a stall grows the pool
    assert not rules.may_grow(1, 9 * ms) and rules.may_grow(1, 10 * ms)
    # 90 answers in 2 ms and 10 stalled for 500 ms: a stall moves the median not at all.
    rules.recorder.uncorrected.extend([2 * ms] * 90 + [500 * ms] * 10)
    assert rules.pool_wanted() == 8  # 4 x 1,000/s x 2 ms
    assert rules.may_grow(7, 1 * ms)
    assert not rules.may_grow(7, ms - 1)  # a busy connection may yet come free
    assert not rules.may_grow(8, 100 * ms)
    # The timeline takes the samples each second: the figure outlives them.
    del rules.recorder.uncorrected[:]
    assert rules.pool_wanted() == 8
    rules.recorder.uncorrected.extend([50 * ms] * 255)  # now most answers take 50 ms
    assert rules.pool_wanted() == 200
    assert rules.may_grow(199, 1 * ms)
    assert not rules.may_grow(rules.pool_limit, 100 * ms)


@pytest.mark.parametrize("options", [{"keepalive": False}, {"requests_per_connection": 5}])
def test_connections_that_close_on_their_own_are_opened_at_once(
    options: dict[str, object],
) -> None:
    spec = http_spec("http://127.0.0.1:9/", rate=100.0, duration=1.0, **options)  # type: ignore[arg-type]
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    assert rules.grows_at_once()


def test_a_closed_loop_run_has_no_schedule_and_stops_at_the_deadline() -> None:
    spec = _spec("http", None)
    rules = _Rules(spec, split_load(spec)[0], build_exchange(spec), START)
    assert rules.collect_due(MEASURE, MEASURE + NS_PER_S) == []
    assert rules.close_window() is False
    assert rules.stopping


def test_the_base_rules_leave_stopping_to_the_loop() -> None:
    spec = _spec("http", None)
    rules = RunAccounting(spec, split_load(spec)[0], build_exchange(spec), START)
    with pytest.raises(NotImplementedError):
        rules.close_window()
