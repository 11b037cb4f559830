"""When a load or an experiment fails its test: a result that cannot be trusted, or an
experiment the generator could not carry out, said with what to do about it."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from pytest_netbench._experiment.capacity import CapacityResult
    from pytest_netbench._experiment.cold_start import ColdStartResult
    from pytest_netbench._experiment.crosscheck import CrosscheckResult
    from pytest_netbench._experiment.sweep import SweepResult
    from pytest_netbench._load.attempts import Attempts


def cause_traceback(exc: BaseException) -> str:
    """The traceback of what caused a deliberate error, when that is the test's own code (a
    flow that raised in every session: its first failing session), as the lines to print
    under the error's message; "" when there is none. A failure is printed without
    pytest's traceback (the plugin's frames say nothing), so the flow's would be lost.
    Frames of this package are left out while any of the user's remain."""
    from pytest_netbench._errors import FlowError, FlowTraceback, NetbenchError

    cause = exc.__cause__
    if not isinstance(exc, FlowError) or cause is None or isinstance(cause, NetbenchError):
        return ""
    if isinstance(cause, FlowTraceback):  # printed by the worker process that ran it
        return f"\n\n{cause}".rstrip()
    package = str(Path(__file__).resolve().parents[1])
    shown = traceback.TracebackException.from_exception(cause)
    own = [frame for frame in shown.stack if not frame.filename.startswith(package)]
    if own:
        shown.stack = traceback.StackSummary.from_list(own)
    return "\n\nThe first failing session's traceback:\n" + "".join(shown.format()).rstrip()


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
