"""``RunAccounting.take_many``: the permits of several requests taken at once (the streams
that ended in one HTTP/2 read each free one) are what as many calls of ``take`` give,
counted alike, with a budget, in and before the window, with requests rendered from
feeders, and once the run stops."""

from __future__ import annotations

from time import monotonic_ns

import pytest
import trio

from pytest_netbench._engine.rules.exchange import build_exchange
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._engine.trio_io.run import TrioRun
from pytest_netbench._input.spec import http_spec
from pytest_netbench._model import feeders


def _state(run: TrioRun) -> tuple[object, ...]:
    return (run.budget, run.recorder.sent, run.spare, len(run.ready), run.source_ran_out)


@pytest.mark.parametrize("options", [{}, {"requests": 7}, {"requests": 1}])
@pytest.mark.parametrize("fed", [False, True], ids=["fixed", "feeders"])
@pytest.mark.parametrize("warm", [False, True], ids=["window", "warm-up"])
@pytest.mark.parametrize("stopped", [False, True], ids=["running", "stopped"])
def test_take_many_is_take_repeated(
    options: dict[str, int], fed: bool, warm: bool, stopped: bool
) -> None:
    url = "http://127.0.0.1:9/" + ("${n}" if fed else "")
    extra: dict[str, object] = {"feeders": {"n": feeders.count()}} if fed else {}
    spec = http_spec(url, connections=1, warmup=3600.0 if warm else 0.0, **options, **extra)

    async def compare() -> None:
        runs = [TrioRun(spec, split_load(spec)[0], build_exchange(spec), monotonic_ns())]
        runs.append(TrioRun(spec, split_load(spec)[0], build_exchange(spec), monotonic_ns()))
        if stopped:
            for run in runs:
                run.stop()
        one, many = runs
        now = monotonic_ns()
        for count in (0, 3, 5, 4):
            allowed = 0
            while allowed < count and one.take(now):
                allowed += 1
            assert many.take_many(now, count) == allowed
            assert _state(many) == _state(one)

    trio.run(compare)
