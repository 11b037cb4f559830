"""Folding a bucket's phase samples (``recorder.fold_phases``): a response that came whole
in one read may be left unrecorded (its wait is its latency, its receive nothing) or
recorded with ``first`` 0, as HTTP/2's steady state records every one; both fold to the
same counts, and a bucket whose every response was recorded skips the subtraction."""

from __future__ import annotations

import random

from pytest_netbench._engine.rules.phases import record_phases
from pytest_netbench._stats.recorder import Recorder

OPENED = 1_000


def _folded(samples: list[tuple[int, int, int]], record_whole: bool) -> dict[str, dict[int, int]]:
    rec = Recorder(0, open_loop=False, bucket_ns=10**9)
    for start, first, now in samples:
        rec.latencies.append(now - start)
        if first or record_whole or start < OPENED:
            record_phases(rec.phases, start, OPENED, first, now)
    rec.close_bucket()
    assert not rec.phases.basis and not rec.phases.waits and not rec.phases.receives
    counts = rec.outcome.phase_counts
    return {name: dict(counts[name]) for name in ("wait", "receive")}


def test_a_whole_answer_recorded_or_not_folds_alike() -> None:
    rng = random.Random(35)
    samples = []
    for _ in range(2_000):
        start = rng.choice((500, 5_000))  # before the connection opened, or after
        now = start + rng.randrange(1_000, 9_000_000)
        first = rng.choice((0, start + (now - start) // 3, now + 5, 200))  # whole, split, odd
        samples.append((start, first, now))
    left_out, recorded = _folded(samples, False), _folded(samples, True)
    assert left_out == recorded
    assert sum(recorded["wait"].values()) == sum(recorded["receive"].values()) == 2_000


def test_every_answer_whole_and_unrecorded_is_its_latency_and_no_receive() -> None:
    samples = [(5_000, 0, 5_000 + 3_000_000 + i) for i in range(10)]
    folded = _folded(samples, False)
    assert folded == {"wait": {3_000: 10}, "receive": {1: 10}}
    assert _folded(samples, True) == folded


def test_a_wait_without_its_receive_is_an_answer_whole_in_its_read() -> None:
    """A connection per request's known answer (``RawHttpConnection._answered``) appends
    its wait, no basis and no receive: it folds as ``record_phases`` with ``first`` 0
    (the waits count the recorded answers, so the bucket skips the subtraction)."""
    samples = [(500, 0, 500 + 2_000_000 + 7_000 * i) for i in range(20)]
    samples += [(600, 600 + 4_000_000, 600 + 5_000_000 + i) for i in range(5)]  # split
    rec = Recorder(0, open_loop=False, bucket_ns=10**9)
    for start, first, now in samples:
        rec.latencies.append(now - start)
        if first:
            record_phases(rec.phases, start, OPENED, first, now)
        else:
            rec.phases.waits.append(now - OPENED)
    rec.close_bucket()
    counts = rec.outcome.phase_counts
    left_out = {name: dict(counts[name]) for name in ("wait", "receive")}
    assert left_out == _folded(samples, True)
    assert left_out["receive"][1] == 20


def test_answers_counted_as_recorded_fold_as_appended() -> None:
    """A connection per request's known answers and connects counted in microsecond slots
    as recorded (``Recorder.count_as_recorded``, a value past the slots appended as ever)
    fold to the figures their appended samples give: latencies, the timeline's row, waits,
    receives and connects, the ok count before the fold, and an empty bucket after it."""
    rng = random.Random(35)
    answers = []
    for _ in range(3_000):
        latency = rng.choice((0, 400, 999, 1_000, 2_047_999, 2_048_000, 8_191_999, 8_192_000))
        latency += rng.randrange(0, 40_000_000 if rng.random() < 0.1 else 3_000_000)
        wait = rng.randrange(0, latency + 1)  # its wait, within it; its connect the rest
        answers.append((latency, wait, latency - wait))
    appended = Recorder(0, open_loop=False, bucket_ns=10**9)
    slotted = Recorder(0, open_loop=False, bucket_ns=10**9)
    latency_slots, wait_slots, connect_slots = slotted.count_as_recorded()
    for latency, wait, connect in answers:
        appended.latencies.append(latency)
        appended.phases.waits.append(wait)
        appended.connects.append(connect)
        for value, slots, samples in (
            (latency, latency_slots, slotted.latencies),
            (wait, wait_slots, slotted.phases.waits),
            (connect, connect_slots, slotted.connects),
        ):
            if value // 1000 < len(slots):
                slots[value // 1000] += 1
            else:
                samples.append(value)
    assert slotted.latencies and slotted.phases.waits and slotted.connects  # past the slots
    assert slotted.ok_so_far() == appended.ok_so_far() == 3_000
    for rec in (appended, slotted):
        rec.close_bucket()
    a, s = appended.outcome, slotted.outcome
    assert s.latency_counts == a.latency_counts
    assert s.phase_counts == a.phase_counts
    assert s.seconds == a.seconds and s.seconds[0].ok == 3_000
    assert sum(a.phase_counts["receive"].values()) == 3_000
    assert sum(a.phase_counts["connect"].values()) == 3_000
    assert not any(latency_slots) and not any(wait_slots) and not any(connect_slots)
    slotted.close_bucket()  # nothing left: an empty row
    assert slotted.outcome.seconds[-1].ok == 0
    assert slotted.outcome.latency_counts == a.latency_counts
