"""A load cut short by a stop is kept as it is: never rerun, whatever else it says."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.api import run_spec
from pytest_netbench._load.attempts import run_with_retries
from pytest_netbench._model import LoadResult, LoadSpec

StartPaced = Callable[[float], str]


def test_an_interrupted_load_is_never_run_again(paced_server: StartPaced) -> None:
    url = paced_server(1000)
    calls: list[LoadSpec] = []

    def lagging_and_cut(spec: LoadSpec) -> LoadResult:
        calls.append(spec)
        result = run_spec(spec)
        return dataclasses.replace(
            result,
            valid=False,
            invalid_reasons=("generator fell behind its schedule: send lag p99 40.0 ms",),
            invalid_causes=("schedule_lag",),
            interrupted=True,
        )

    attempts = run_with_retries(http_spec(url, requests=5), lagging_and_cut, retries=2)
    assert len(calls) == 1
    assert attempts.discarded == ()
