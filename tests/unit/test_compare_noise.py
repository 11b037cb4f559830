"""Noise floors from A/A trials: the spread of one trial, the floor of a median, the
warning for a limit below it, and the history read from stored runs (no sockets)."""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from pathlib import Path

from factories import make_result

from pytest_netbench._compare.gate import compare_runs
from pytest_netbench._compare.noise import (
    limits_below_noise,
    noise_floor,
    noise_of_sessions,
    stored_noise,
    trial_spread,
)
from pytest_netbench._compare.records import Record, Session
from pytest_netbench._compare.storage import Storage
from pytest_netbench._compare.thresholds import parse_thresholds
from pytest_netbench._model import LoadResult, ServerStats
from pytest_netbench._report.comparison import comparison_to_dict, render_comparison_text


def _lognormal_groups(
    rng: random.Random, sigma: float, groups: int, size: int
) -> list[list[float]]:
    levels = [100 * rng.uniform(0.5, 2.0) for _ in range(groups)]  # each test its own size
    return [[level * math.exp(rng.gauss(0, sigma)) for _ in range(size)] for level in levels]


def test_trial_spread_recovers_the_noise_of_one_trial_whatever_the_level() -> None:
    rng = random.Random(1)
    spread, trials, groups = trial_spread(_lognormal_groups(rng, 0.05, 40, 5))
    assert abs(spread - 0.05) < 0.008
    assert (trials, groups) == (200, 40)
    assert math.isnan(trial_spread([[1.0], [0.0, -1.0]])[0])  # nothing usable


def test_noise_floor_is_exceeded_by_a_a_noise_about_one_time_in_twenty() -> None:
    rng = random.Random(2)
    sigma, trials, runs = 0.05, 6, 4000
    floor = noise_floor(sigma, trials)
    exceeded = 0
    for _ in range(runs):
        a = statistics.median(rng.gauss(0, sigma) for _ in range(trials))  # log figures
        b = statistics.median(rng.gauss(0, sigma) for _ in range(trials))
        exceeded += abs(a - b) > math.log1p(floor)
    assert 0.04 < exceeded / runs < 0.06
    assert noise_floor(sigma, 24) < floor / 1.8  # four times the trials: about half


def test_a_limit_below_the_floor_is_flagged_with_what_would_clear_it() -> None:
    rng = random.Random(3)
    sessions = [
        Session(records=tuple(_records(rng, "t.py::test_a", 0.08, 5)), environment={}),
        Session(records=tuple(_records(rng, "t.py::test_b", 0.08, 5)), environment={}),
    ]
    noise = noise_of_sessions(sessions, ["p99_ms", "server.cpu_ms_per_request"])
    assert noise["p99_ms"].groups == 2 and noise["p99_ms"].source == "history"
    # 10 %, under the floor at 5 trials (15.2 %): the trials that would clear it are found by
    # simulating the median of each count up to 12 (at 5 %, up to 48: five times as long).
    warnings = limits_below_noise(parse_thresholds("p99_ms:10%,rps:50%"), noise, trials=5)
    assert len(warnings) == 1
    assert warnings[0].startswith("p99_ms rise > 10%: below the noise floor of p99_ms (15.2%")
    assert "about 12 trials a side would clear it" in warnings[0]
    assert "server.cpu_ms_per_request" in noise  # measured beside rps and latency


def test_stored_runs_of_this_machine_give_the_noise_shown_in_the_table(tmp_path: Path) -> None:
    rng = random.Random(4)
    storage = Storage(tmp_path, machine_key="here")
    for name in ("one", "two"):
        storage.save(_records(rng, "t.py::test_a", 0.04, 6), name, {"machine_key": "here"})
    noise = stored_noise(str(tmp_path / "missing"), ["p99_ms"])
    assert noise == {}
    baseline, current = (
        _records(rng, "t.py::test_a", 0.04, 6),
        _records(rng, "t.py::test_a", 0.04, 6),
    )
    history = noise_of_sessions([storage.load("one"), storage.load("two")], ["p99_ms"])
    comparison = compare_runs(current, baseline, parse_thresholds("p99_ms:10%"), noise=history)
    (p99,) = [i for i in comparison.items if i.metric == "p99_ms"]
    assert p99.noise is not None and p99.noise.source == "history"
    assert p99.noise_floor is not None and 0.02 < p99.noise_floor < 0.1
    text = render_comparison_text(comparison)
    line = next(row for row in text.splitlines() if row.strip().startswith("p99_ms"))
    assert f"{p99.noise_floor * 100:.1f}%" in line and "  6  " in line
    data = comparison_to_dict(comparison)
    (row,) = [i for i in data["items"] if i["metric"] == "p99_ms"]
    assert row["noise_source"] == "history" and row["trials"] == 6
    assert row["verdict"] == p99.verdict and len(row["current_values"]) == 6


def _records(rng: random.Random, nodeid: str, sigma: float, trials: int) -> list[Record]:
    return [
        Record(nodeid=nodeid, function="test", params={}, result=_result(rng, sigma), trial=i)
        for i in range(trials)
    ]


def _result(rng: random.Random, sigma: float) -> LoadResult:
    scale = math.exp(rng.gauss(0, sigma))
    result = make_result(int(1000 / scale), p50_ms=2.0 * scale, p99_ms=8.0 * scale)
    server = ServerStats(
        pid=1, cpu_user_s=0.3, cpu_ms_per_request=0.3 * math.exp(rng.gauss(0, 0.01))
    )
    return dataclasses.replace(result, server=server)
