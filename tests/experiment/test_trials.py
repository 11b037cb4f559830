"""Trials: reruns of trials the generator spoiled, the median trial, A/B order, and their
JSON forms. Loads are real (a paced server, short runs); a runner marks chosen attempts
invalid the way the engine would, since a real generator fault cannot be made on demand."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import pytest

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.trials import (
    AbResult,
    Arm,
    TrialsResult,
    ab_order,
    ab_trials,
    median_trial,
    run_trials,
)
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.api import run_spec
from pytest_netbench._load.attempts import run_with_retries
from pytest_netbench._model import LoadResult, LoadSpec

StartPaced = Callable[[float], str]
LAG = "generator fell behind its schedule: send lag p99 25.0 ms: add workers or lower the rate"
POOL = "rate not achieved: 30 of 300 scheduled requests were never sent"


def spoiling(
    *marks: tuple[str, str] | None, calls: list[LoadSpec] | None = None
) -> Callable[[LoadSpec], LoadResult]:
    """A runner whose n-th real run is made invalid for ``marks[n]`` (cause, reason); runs
    past the marks, or marked None, are kept as measured."""
    count = [0]

    def run(spec: LoadSpec) -> LoadResult:
        if calls is not None:
            calls.append(spec)
        result = run_spec(spec)
        mark = marks[count[0]] if count[0] < len(marks) else None
        count[0] += 1
        if mark is None:
            return result
        cause, reason = mark
        return dataclasses.replace(
            result, valid=False, invalid_reasons=(reason,), invalid_causes=(cause,)
        )

    return run


def short_open_load(url: str) -> LoadSpec:
    return http_spec(url, rate=300, duration=0.3, connections=2)


def test_a_trial_spoiled_by_the_generator_is_run_again_and_counted_as_discarded(
    paced_server: StartPaced,
) -> None:
    spec = short_open_load(paced_server(2000))
    calls: list[LoadSpec] = []
    result = run_trials(
        spec, trials=2, runner=spoiling(("schedule_lag", LAG), None, None, calls=calls)
    )

    first = result.trials[0]
    assert first.runs >= 2
    assert first.discarded[0].invalid_reasons == (LAG,)
    assert result.discarded_causes["schedule_lag"] >= 1
    assert len(calls) == sum(t.runs for t in result.trials)
    # Each trial keeps a real run, not the one this runner spoiled. (A busy machine may
    # spoil real runs too, each rerun as well; on a machine busy enough it spoils all
    # three, so the kept run's validity is the machine's, not asserted.)
    assert all(t.kept.invalid_reasons != (LAG,) and t.kept.ok > 0 for t in result.trials)


def test_only_a_trial_invalid_on_every_attempt_makes_the_outcome_invalid(
    paced_server: StartPaced,
) -> None:
    spec = short_open_load(paced_server(2000))
    lag = ("schedule_lag", LAG)
    attempts = run_with_retries(spec, spoiling(lag, lag, lag, lag), retries=2)
    assert attempts.runs == 3
    assert attempts.generator_limited
    assert not attempts.kept.valid
    outcome = TrialsResult((attempts,))
    assert not outcome.valid
    assert outcome.discarded_causes == {"schedule_lag": 2}


def test_a_server_side_cause_is_not_run_again(paced_server: StartPaced) -> None:
    spec = short_open_load(paced_server(2000))
    calls: list[LoadSpec] = []
    attempts = run_with_retries(spec, spoiling(("rate_not_achieved", POOL), calls=calls))
    assert len(calls) == 1
    assert attempts.runs == 1 and not attempts.kept.valid
    assert not attempts.generator_limited


def test_the_median_trial_is_the_lower_middle_by_throughput(paced_server: StartPaced) -> None:
    real = run_spec(short_open_load(paced_server(2000)))
    results = [dataclasses.replace(real, ok=ok, sent=ok) for ok in (90, 30, 60, 75)]
    assert median_trial(results).ok == 60
    assert median_trial(results[:3]).ok == 60
    with pytest.raises(SpecError):
        median_trial([])


def test_ab_trials_run_in_abba_order_and_survive_json(paced_server: StartPaced) -> None:
    a_url, b_url = paced_server(1000), paced_server(2000)
    calls: list[LoadSpec] = []

    def recording(spec: LoadSpec) -> LoadResult:
        calls.append(spec)
        return run_spec(spec)

    a = Arm("base", http_spec(a_url, requests=40, connections=2), recording)
    b = Arm("head", http_spec(b_url, requests=40, connections=2), recording)
    result = ab_trials(a, b, trials=3)

    assert result.order == ("base", "head", "head", "base", "base", "head")
    ports = {a.spec.port: "base", b.spec.port: "head"}
    assert tuple(ports[s.port] for s in calls) == result.order
    assert len(result.a.results) == len(result.b.results) == 3
    assert all(r.ok == 40 for r in result.a.results + result.b.results)
    assert result.valid

    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["a"]["median_trial"] in (0, 1, 2)
    back = AbResult.from_dict(data)
    assert back.order == result.order and back.names == ("base", "head")
    assert [r.ok for r in back.b.results] == [r.ok for r in result.b.results]
    assert back.a.median.rps == result.a.median.rps
    assert AbResult.from_dict(back.to_dict()).to_dict() == back.to_dict()


def test_abba_order_and_argument_checks() -> None:
    assert ab_order(2) == [(0, 0), (0, 1), (1, 1), (1, 0)]
    spec = http_spec("http://127.0.0.1:9/")
    with pytest.raises(SpecError, match="different names"):
        ab_trials(Arm("x", spec), Arm("x", spec))
    with pytest.raises(SpecError, match="trials"):
        run_trials(spec, trials=0)
    with pytest.raises(SpecError, match="retries"):
        run_trials(spec, retries=-1)
