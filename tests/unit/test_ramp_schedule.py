"""The schedules of a ramp (``stages=``), with numbers alone: no sockets, no loop."""

from __future__ import annotations

import math

import pytest

from pytest_netbench import http_spec
from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.open_rules import OpenAccounting
from pytest_netbench._engine.rules.ramp import NEVER_NS, ConnectionRamp, RampSchedule
from pytest_netbench._engine.rules.schedule import Schedule
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._model.stages import RampProfile, Stage

NS = 1_000_000_000
ORIGIN = 5 * NS  # any monotonic instant


def due_times(schedule: RampSchedule, limit: int = 1_000_000) -> list[int]:
    times = [schedule.first(ORIGIN)]
    while times[-1] != NEVER_NS and len(times) < limit:
        times.append(schedule.next(times[-1]))
    assert times[-1] == NEVER_NS, "the ramp should run out of requests"
    return [t - ORIGIN for t in times[:-1]]


def sent_by(times: list[int], t_s: float) -> int:
    return sum(1 for t in times if t <= t_s * NS)


def test_every_send_time_is_where_the_integral_reaches_a_whole_number() -> None:
    # 0 -> 100 req/s over 4 s, 2 s flat at 100, a 1 s pause (target 0), 0 -> 40 over 2 s.
    profile = RampProfile(
        0.0, (Stage(4, 100), Stage(2, 100), Stage(1, 0), Stage(1, 0), Stage(2, 40))
    )
    times = due_times(RampSchedule(profile, "uniform"))
    assert len(times) == math.floor(profile.integral(profile.duration_s))
    for j, t in enumerate(times, start=1):
        assert profile.integral(t / NS) == pytest.approx(j, abs=1e-6)
    # By any time, the count due is the integral's whole part: never a request ahead or behind.
    for tenth in range(0, 101):
        t_s = tenth / 10
        assert sent_by(times, t_s) == math.floor(profile.integral(t_s) + 1e-9)


def test_linear_ramp_from_zero_sends_a_quarter_in_its_first_half() -> None:
    profile = RampProfile(0.0, (Stage(10, 1000),))
    times = due_times(RampSchedule(profile, "uniform"))
    first, second = sent_by(times, 5), len(times) - sent_by(times, 5)
    assert (first, second) == (1250, 3750)


def test_a_stage_with_target_zero_sends_nothing_while_at_zero() -> None:
    profile = RampProfile(50.0, (Stage(2, 0), Stage(3, 0), Stage(1, 50)))
    times = due_times(RampSchedule(profile, "uniform"))
    assert not [t for t in times if 2 * NS < t < 5 * NS]
    assert sent_by(times, 2) == 50  # the ramp down: half of 2 s at 50 req/s
    assert len(times) == 50 + 25


def test_a_flat_ramp_is_the_constant_rate_one_interval_later() -> None:
    """A single flat stage at R: request j due at j / R, as the constant-rate schedule's
    request j (which sends its first at 0) -- so a flat ramp and rate=R agree."""
    flat = due_times(RampSchedule(RampProfile(200.0, (Stage(3, 200),)), "uniform"))
    constant = Schedule(200.0, "uniform")
    expected = [constant.first(ORIGIN)]
    while len(expected) < len(flat) + 1:
        expected.append(constant.next(expected[-1]))
    assert len(flat) == 600
    assert all(abs(a - (b - ORIGIN)) <= 1 for a, b in zip(flat, expected[1:], strict=True))


def test_shares_together_are_the_whole_load() -> None:
    profile = RampProfile(10.0, (Stage(2, 300), Stage(1, 0)))
    whole = due_times(RampSchedule(profile, "uniform"))
    shares = [due_times(RampSchedule(profile, "uniform", index=i, workers=3)) for i in range(3)]
    assert sorted(t for share in shares for t in share) == whole
    assert [len(s) for s in shares] == [len(whole[i::3]) for i in range(3)]


def test_a_warm_up_lead_holds_the_start_rate() -> None:
    profile = RampProfile(100.0, (Stage(1, 300),), lead_s=2.0)
    times = due_times(RampSchedule(profile, "uniform"))
    assert sent_by(times, 2) == 200
    assert len(times) == 200 + 200


def test_poisson_arrivals_follow_the_ramp() -> None:
    profile = RampProfile(0.0, (Stage(10, 2000),))
    times = due_times(RampSchedule(profile, "poisson", seed=7))
    first = sent_by(times, 5)
    second = len(times) - first
    assert len(times) == pytest.approx(10_000, rel=0.05)
    assert second / first == pytest.approx(3.0, rel=0.1)
    assert times == sorted(times)


def test_connections_follow_the_ramp_rounded() -> None:
    profile = RampProfile(0.0, (Stage(10, 10), Stage(5, 10), Stage(5, 0)))
    ramp = ConnectionRamp(profile)
    assert ramp.start(ORIGIN) == 0
    changes: list[tuple[float, int]] = []
    t = ORIGIN
    while (t := ramp.next_change(t)) != NEVER_NS:
        changes.append((round((t - ORIGIN) / NS, 3), ramp.count_at(t)))
    ups = [(0.5 + k, k + 1) for k in range(10)]
    downs = [(15.25 + 0.5 * k, 9 - k) for k in range(10)]
    assert changes == ups + downs


def test_connections_split_among_shares_add_up_to_the_whole() -> None:
    profile = RampProfile(3.0, (Stage(4, 17), Stage(2, 1)))
    shares = [ConnectionRamp(profile, index=i, workers=3) for i in range(3)]
    whole = ConnectionRamp(profile)
    whole.start(ORIGIN)
    for share in shares:
        share.start(ORIGIN)
    for hundredth in range(0, 700):
        t = ORIGIN + hundredth * NS // 100
        assert sum(share.count_at(t) for share in shares) == whole.count_at(t)
    # Each share wakes exactly when its own count moves, and the changes cover the whole.
    total_changes = 0
    for share in shares:
        t = ORIGIN
        while (following := share.next_change(t)) != NEVER_NS:
            assert share.count_at(following) != share.count_at(following - 2)
            t = following
            total_changes += 1
    assert total_changes == 14 + 16


class _Accounting(OpenAccounting):
    """The open-loop rules with no loop under them (nothing here stops a run)."""

    def stop(self) -> None:
        self.stop_counting(())


def test_the_open_loop_rules_collect_what_the_ramp_holds() -> None:
    """``collect_due`` on a ramp: by each horizon, the measured requests fallen due are
    those whose crossing of a whole number lies in the window so far (the one due at the
    window's opening included); the warm-up holds the start rate, uncounted."""
    spec = http_spec("http://127.0.0.1:9/", rate=100, warmup=1, stages=[("2s", 900)])
    share = split_load(spec)[0]
    rules = _Accounting(spec, share, build_exchange(spec), ORIGIN)
    warm = rules.collect_due(ORIGIN + NS, ORIGIN + NS - 1)
    assert len(warm) == 99 and rules.scheduled == 0  # 100 req/s for the 1 s warm-up
    for k in range(20):
        window_s = (2 * k + 1) / 20  # between whole counts: 5.5, 19.5, 37.5 ...
        horizon = ORIGIN + NS + round(window_s * NS)
        rules.collect_due(horizon, horizon)
        assert rules.scheduled == math.ceil(100 * window_s + 200 * window_s**2), window_s
    rules.collect_due(ORIGIN + 3 * NS, rules.deadline_ns - 1)  # as the deadline does
    assert rules.scheduled == 1000  # the ramp's 100 * 2 + 200 * 4 over the window
