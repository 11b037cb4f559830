"""The per-worker recorder: flat arrays folded per second into a lossless outcome."""

from __future__ import annotations

import errno
import pickle
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netbench._model import ERROR_KINDS
from pytest_netbench._stats.recorder import Recorder, WorkerOutcome, pack_counts, unpack_counts

NS = 1_000_000_000


def test_each_tick_makes_one_timeline_row_of_that_second() -> None:
    rec = Recorder(0, open_loop=False)
    rec.latencies.extend([1_000_000, 2_000_000, 3_000_000])
    rec.error("reset", "connection reset by peer")
    rec.tick()
    rec.latencies.extend([5_000_000])
    rec.tick()
    rec.error("timeout", "no complete response")
    rec.error("timeout", "no complete response")
    rec.tick()
    rows = [(row.ok, row.errors, row.p99_ms) for row in rec.outcome.seconds]
    assert rows[0] == (3, 1, 3.0)
    assert rows[1] == (1, 0, 5.0)
    assert rows[2][:2] == (0, 2)
    assert rec.outcome.latency_counts == Counter({1000: 1, 2000: 1, 3000: 1, 5000: 1})
    assert len(rec.latencies) == 0


def test_finish_folds_a_partial_last_second() -> None:
    rec = Recorder(5 * NS, open_loop=False)
    rec.sent = 4
    rec.latencies.extend([1_000_000] * 3)
    rec.tick()
    rec.latencies.append(2_000_000)
    out = rec.finish(in_flight=0, window_end_ns=6 * NS + NS // 2)
    assert [row.ok for row in out.seconds] == [3, 1]
    assert sum(out.latency_counts.values()) == 4
    assert (out.window_start_ns, out.window_end_ns) == (5 * NS, 6 * NS + NS // 2)
    assert out.sent == 4


def test_finish_adds_a_row_for_late_errors_only_when_there_are_some() -> None:
    rec = Recorder(0, open_loop=False)
    rec.latencies.append(1_000)
    rec.tick()
    quiet = rec.finish(in_flight=0, window_end_ns=NS)
    assert len(quiet.seconds) == 1

    rec = Recorder(0, open_loop=False)
    rec.tick()
    rec.error("connect", "connect failed: connection refused", errno.ECONNREFUSED)
    late = rec.finish(in_flight=2, window_end_ns=NS)
    assert [(row.ok, row.errors) for row in late.seconds] == [(0, 0), (0, 1)]
    assert late.in_flight == 2


def test_at_a_finer_resolution_the_loop_tick_leaves_buckets_to_the_run() -> None:
    rec = Recorder(0, open_loop=False, bucket_ns=NS // 10)
    rec.latencies.extend([1_000_000, 2_000_000])
    rec.tick()  # the loop's once-a-second tick: not this recorder's bucket
    assert rec.outcome.seconds == []
    rec.close_bucket()
    rec.latencies.append(3_000_000)
    rec.close_bucket()
    out = rec.finish(in_flight=0, window_end_ns=NS // 5)
    assert [row.ok for row in out.seconds] == [2, 1]


def test_a_mix_records_latencies_and_statuses_per_kind() -> None:
    rec = Recorder(0, open_loop=False, request_kinds=2)
    rec.by_request[0].latencies.extend([1_000_000, 3_000_000])
    rec.by_request[0].status_codes[200] = 2
    rec.by_request[1].latencies.append(2_000_000)
    rec.by_request[1].status_codes.update({200: 1, 404: 1})
    rec.error("status", "HTTP 404", request_kind=1)
    assert rec.ok_so_far() == 3
    rec.close_bucket()
    out = rec.finish(in_flight=1, window_end_ns=NS, in_flight_by_request=[0, 1])
    assert out.latency_counts == Counter({1000: 1, 2000: 1, 3000: 1})
    assert [row.ok for row in out.seconds] == [3]
    assert out.by_request[0].latency_counts == Counter({1000: 1, 3000: 1})
    assert out.by_request[1].errors["status"] == 1
    assert out.by_request[1].in_flight == 1
    assert out.status_codes == {200: 3, 404: 1}


def test_open_loop_keeps_uncorrected_and_lag_samples() -> None:
    rec = Recorder(0, open_loop=True)
    rec.latencies.extend([10_000_000, 20_000_000])
    rec.uncorrected.extend([1_000_000, 2_000_000])
    rec.lags.extend([100_000, 0])
    out = rec.finish(in_flight=0, window_end_ns=NS)
    assert out.latency_counts == Counter({10_000: 1, 20_000: 1})
    assert out.uncorrected_counts == Counter({1_000: 1, 2_000: 1})
    assert out.lag_counts == Counter({100: 1, 1: 1})


def test_closed_loop_ignores_uncorrected_buffers() -> None:
    rec = Recorder(0, open_loop=False)
    rec.latencies.append(1_000)
    out = rec.finish(in_flight=0, window_end_ns=NS)
    assert out.uncorrected_counts == Counter()
    assert out.lag_counts == Counter()


def test_error_counts_by_kind_and_keeps_the_first_sample_short() -> None:
    rec = Recorder(0, open_loop=False)
    rec.error("protocol", "malformed response: " + "x" * 500)
    rec.error("protocol", "a later, different reason")
    out = rec.finish(in_flight=0, window_end_ns=NS)
    assert out.errors == {**dict.fromkeys(ERROR_KINDS, 0), "protocol": 2}
    assert out.error_samples["protocol"].startswith("malformed response: x")
    assert len(out.error_samples["protocol"]) == 200


def test_generator_side_errnos_are_counted_as_generator_faults() -> None:
    rec = Recorder(0, open_loop=False)
    rec.error("connect", "EMFILE", errno.EMFILE)
    rec.error("connect", "EADDRNOTAVAIL", errno.EADDRNOTAVAIL)
    rec.error("connect", "refused", errno.ECONNREFUSED)
    rec.error("connect", "timeout", None)
    out = rec.finish(in_flight=0, window_end_ns=NS)
    assert out.generator_faults == 2
    assert out.errors["connect"] == 4


def test_reset_window_forgets_warmup_bytes_only() -> None:
    rec = Recorder(0, open_loop=False)
    rec.bytes_read, rec.bytes_written, rec.sent = 1000, 2000, 3
    rec.reset_window()
    assert (rec.bytes_read, rec.bytes_written, rec.sent) == (0, 0, 3)


def test_outcome_survives_pickling_for_worker_processes() -> None:
    rec = Recorder(0, open_loop=True)
    rec.latencies.extend([1_000_000, 2_000_000])
    rec.status_codes[200] = 2
    rec.sent = 2
    out = rec.finish(in_flight=0, window_end_ns=NS)
    back = pickle.loads(pickle.dumps(out))
    assert isinstance(back, WorkerOutcome)
    assert back == out


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.integers(min_value=1, max_value=2**63 - 1),
        st.integers(min_value=1, max_value=2**63 - 1),
        max_size=300,
    )
)
def test_a_rows_counts_unpack_as_they_were_packed(counts: dict[int, int]) -> None:
    assert unpack_counts(pack_counts(counts)) == Counter(counts)


def test_a_row_of_a_typical_second_packs_small() -> None:
    # 200 requests a second, 100 µs to 2 ms: a soak keeps one such row a second.
    counts = Counter({100 + 9 * i: 1 + i % 3 for i in range(200)})
    assert len(pack_counts(counts)) < 400


def test_a_run_keeps_one_timer_per_purpose() -> None:
    import asyncio

    from pytest_netbench._engine.asyncio_io.timers import RunTimers

    fired: list[str] = []

    async def main() -> int:
        loop = asyncio.get_running_loop()
        timers = RunTimers(loop)
        done = loop.create_future()

        def again() -> None:
            fired.append("tick")
            if len(fired) < 50:
                timers.after("tick", 0, again)
            else:
                done.set_result(None)

        timers.after("tick", 0, again)
        timers.after("deadline", 3600, lambda: fired.append("deadline"))
        await done
        held = len(timers)
        timers.cancel_all()
        await asyncio.sleep(0)
        return held

    assert asyncio.run(main()) == 2
    assert fired == ["tick"] * 50


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 20_000_000),  # latency (ns)
            st.booleans(),  # its phases recorded explicitly
            st.integers(0, 20_000_000),  # wait
            st.sampled_from([0, 0, 999, 1_000, 7_654_321]),  # receive
        ),
        max_size=40,
    )
)
def test_phases_fold_alike_whether_every_response_recorded_them_or_some(
    responses: list[tuple[int, bool, int, int]],
) -> None:
    # The fold's shortcuts (the basis samples compared side by side with the latencies,
    # receives all zero counted at once) give what counting every sample gives.
    rec = Recorder(0, open_loop=False)
    wait: Counter[int] = Counter()
    receive: Counter[int] = Counter()

    def us(ns: int) -> int:
        return max(ns // 1_000, 1)

    for latency, explicit, waited, received in responses:
        rec.latencies.append(latency)
        if explicit:
            rec.phases.basis.append(latency)
            rec.phases.waits.append(waited)
            rec.phases.receives.append(received)
            wait[us(waited)] += 1
            receive[us(received)] += 1
        else:  # came whole in one read: its wait is its latency, its receive nothing
            wait[us(latency)] += 1
            receive[1] += 1
    rec.tick()
    phases = rec.outcome.phase_counts
    # (below 2,048 µs the histogram keeps every value; above, the counts are folded
    # to its resolution, so compare totals and the exact part)
    assert sum(phases["wait"].values()) == sum(wait.values())
    assert sum(phases["receive"].values()) == sum(receive.values())
    assert {k: v for k, v in phases["wait"].items() if k < 2048} == {
        k: v for k, v in wait.items() if k < 2048
    }
    assert {k: v for k, v in phases["receive"].items() if k < 2048} == {
        k: v for k, v in receive.items() if k < 2048
    }
