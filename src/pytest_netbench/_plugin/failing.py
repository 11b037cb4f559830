"""When a load or an experiment fails its test: a result that cannot be trusted, or an
experiment the generator could not carry out, said with what to do about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from pytest_netbench._experiment.capacity import CapacityResult
    from pytest_netbench._experiment.cold_start import ColdStartResult
    from pytest_netbench._experiment.crosscheck import CrosscheckResult
    from pytest_netbench._experiment.sweep import SweepResult
    from pytest_netbench._load.attempts import Attempts


def fail_test(problem: str) -> NoReturn:
    pytest.fail(problem, pytrace=False)


def fail_if_invalid(attempts: Attempts) -> None:
    result = attempts.kept
    if result.valid:
        return
    # A reason's own lines (a dead server's log tail) stay lines, under its bullet.
    reasons = "\n  - ".join(r.replace("\n", "\n    ") for r in result.invalid_reasons)
    reasons = reasons or "(no reason given)"
    if attempts.discarded:
        runs = f" on each of its {attempts.runs} runs (the generator or the host spoiled every one)"
    elif result.invalid_by_generator_only:
        runs = " (retries are off, so it was not run again)"
    else:
        runs = " (a server-side cause: not run again)"
    fail_test(
        f"netbench: the result for {result.url} is INVALID{runs}, its figures cannot be"
        f" trusted:\n  - {reasons}\n(pass allow_invalid=True to assert on it anyway)"
    )


def fail_if_unusable(
    result: SweepResult | CapacityResult | ColdStartResult | CrosscheckResult,
) -> None:
    """An experiment with a load the generator could not produce, even after reruns; for a
    cold start (one run, nothing to fall back on) and a crosscheck (netbench's run is one
    side of the comparison), a run invalid for any cause."""
    from pytest_netbench._experiment.cold_start import ColdStartResult
    from pytest_netbench._experiment.crosscheck import CrosscheckResult
    from pytest_netbench._experiment.sweep import SweepResult

    if isinstance(result, ColdStartResult | CrosscheckResult):
        fail_if_invalid(result.attempts)
        return
    if isinstance(result, SweepResult):
        spoiled = [(s.rate, s.attempts) for s in result.steps if s.attempts.generator_limited]
    else:
        spoiled = [(p.rate, p.attempts) for p in result.all_steps if p.verdict == "unusable"]
    if not spoiled:
        return
    lines = "\n  - ".join(
        f"{rate:,.6g} req/s, {attempts.runs} run(s): " + "; ".join(attempts.kept.invalid_reasons)
        for rate, attempts in spoiled
    )
    fail_test(
        "netbench: the generator could not produce every load of this experiment, so those"
        f" steps do not measure the server:\n  - {lines}\n(add workers, lower the rates, raise"
        " retries, or pass allow_invalid=True to look at the result anyway)"
    )
