"""Each invalid reason comes with a machine-readable cause, kept through JSON, and a result
can say whether only the generator is to blame (what decides a retry)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from pytest_netbench import Server
from pytest_netbench._experiment.running import default_runner
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.attempts import (
    FIRST_RETRY_PAUSE_S,
    LONGEST_RETRY_PAUSE_S,
    pause_before_rerun,
    run_with_retries,
)
from pytest_netbench._model import GENERATOR_CAUSES, INVALID_CAUSES, LoadResult, LoadSpec
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

PACED_SERVER = Path(__file__).with_name("paced_server.py")
NS = 1_000_000_000
START = 10 * NS
CLOSED = LoadSpec(kind="http", host="127.0.0.1", port=8080, requests=1000)
OPEN = LoadSpec(kind="http", host="127.0.0.1", port=8080, duration_s=1.0, rate=1000.0)


def outcome(**fields: object) -> WorkerOutcome:
    return WorkerOutcome(window_start_ns=START, window_end_ns=START + NS, **fields)  # type: ignore[arg-type]


def test_a_valid_result_has_no_causes() -> None:
    result = merge_outcomes(CLOSED, [outcome(cpu_s=0.3, busy_s=0.4)])
    assert result.valid
    assert result.invalid_causes == ()
    assert not result.invalid_by_generator_only


def test_each_reason_has_its_cause_in_the_same_order() -> None:
    result = merge_outcomes(
        OPEN,
        [
            outcome(
                generator_faults=2,
                cpu_s=0.95,
                busy_s=0.97,
                scheduled=1000,
                unsent=100,
                sent=900,
                connections_peak=OPEN.pool_limit,
                lag_counts=Counter({40_000: 10}),
            )
        ],
    )
    assert result.invalid_causes == (
        "generator_fds",
        "generator_saturated",
        "rate_not_achieved",
        "schedule_lag",
    )
    assert len(result.invalid_reasons) == len(result.invalid_causes)
    assert result.invalid_reasons[0].startswith("generator ran out of file descriptors")
    assert result.invalid_reasons[3].startswith("generator fell behind its schedule")
    # The pool filled because the server held the requests: not the generator's doing alone.
    assert not result.invalid_by_generator_only


def test_schedule_lag_or_saturation_alone_blame_the_generator() -> None:
    lagging = merge_outcomes(OPEN, [outcome(lag_counts=Counter({50_000: 10}), scheduled=10)])
    saturated = merge_outcomes(CLOSED, [outcome(cpu_s=0.7, busy_s=0.95)])
    assert lagging.invalid_causes == ("schedule_lag",)
    assert saturated.invalid_causes == ("generator_saturated",)
    assert lagging.invalid_by_generator_only
    assert saturated.invalid_by_generator_only


def test_a_server_side_cause_is_never_the_generator_alone() -> None:
    lagging = merge_outcomes(OPEN, [outcome(lag_counts=Counter({50_000: 10}), scheduled=10)])
    crashed = dataclasses.replace(
        lagging,
        invalid_reasons=(*lagging.invalid_reasons, "server died during the load: exit 1"),
        invalid_causes=(*lagging.invalid_causes, "server_died"),
    )
    assert not crashed.invalid_by_generator_only
    assert set(GENERATOR_CAUSES) < set(INVALID_CAUSES)


def test_causes_survive_the_json_round_trip() -> None:
    result = merge_outcomes(OPEN, [outcome(lag_counts=Counter({50_000: 10}), scheduled=10)])
    data = json.loads(json.dumps(result.to_dict()))
    assert data["invalid_causes"] == ["schedule_lag"]
    back = LoadResult.from_dict(data)
    assert back.invalid_causes == ("schedule_lag",)
    assert back.invalid_reasons == result.invalid_reasons
    assert back.invalid_by_generator_only


def test_json_written_before_causes_existed_still_loads_with_causes_read_from_reasons() -> None:
    result = merge_outcomes(
        OPEN,
        [outcome(cpu_s=0.95, busy_s=0.97, lag_counts=Counter({40_000: 10}), scheduled=10)],
    )
    data = result.to_dict()
    del data["invalid_causes"]
    data["invalid_reasons"].append("server died during the load: exit code -9")
    data["invalid_reasons"].append("something a later version wrote")
    back = LoadResult.from_dict(data)
    assert back.invalid_causes == ("generator_saturated", "schedule_lag", "server_died", "unknown")
    assert not back.invalid_by_generator_only
    valid = merge_outcomes(CLOSED, [outcome()]).to_dict()
    del valid["invalid_causes"]
    assert LoadResult.from_dict(valid).invalid_causes == ()


def test_a_managed_server_dying_during_the_load_is_a_server_side_cause(tmp_path: Path) -> None:
    server = Server(
        [sys.executable, str(PACED_SERVER), "2000", "{port}"],
        port_pattern=r"NETBENCH_LISTENING port=(\d+)",
        name="paced",
        log_dir=tmp_path,
        startup_timeout=20,
    )
    with server:
        assert server.pid is not None
        killer = threading.Timer(0.3, os.kill, (server.pid, signal.SIGKILL))
        killer.start()
        try:
            attempts = run_with_retries(
                http_spec(server.url, connections=2, duration=0.8),
                default_runner(server),
            )
        finally:
            killer.cancel()
    result = attempts.kept
    assert result.invalid_causes[-1] == "server_died"
    assert result.invalid_reasons[-1].startswith("server died during the load")
    assert not result.invalid_by_generator_only
    assert attempts.runs == 1  # a crash is the server's doing: not run again


def test_connections_missing_at_the_window_make_the_result_invalid_naming_them() -> None:
    spec = dataclasses.replace(CLOSED, connections=100, connect_first=True)
    result = merge_outcomes(
        spec,
        [
            outcome(
                connect_first=True,
                connections_ready=52,
                connect_failures=48,
                connect_failure_sample="connect failed: connect timeout",
            )
        ],
    )
    assert result.invalid_causes == ("connections_not_opened",)
    assert (
        "52 of 100 (48 connects failed: connect failed: connect timeout)"
        in (result.invalid_reasons[0])
    )
    assert not result.invalid_by_generator_only
    whole = merge_outcomes(spec, [outcome(connect_first=True, connections_ready=100)])
    assert whole.valid


def test_a_run_the_host_spoiled_is_rerun_after_a_growing_pause() -> None:
    """A burst that spoiled one run usually still runs the instant after it: a run whose
    generator waited for a CPU far more than it ran is rerun after 1 s, then 2 s; one the
    generator itself saturated at once. The valid run that ends them is kept."""
    waited = merge_outcomes(CLOSED, [outcome(cpu_s=0.1, busy_s=0.95)])
    saturated = merge_outcomes(CLOSED, [outcome(cpu_s=0.9, busy_s=0.95)])
    valid = merge_outcomes(CLOSED, [outcome(cpu_s=0.3, busy_s=0.4)])
    assert waited.invalid_by_generator_only and saturated.invalid_by_generator_only
    runs = [waited, waited, saturated, valid]
    started: list[float] = []

    def runner(spec: LoadSpec) -> LoadResult:
        started.append(time.monotonic())
        return runs[len(started) - 1]

    attempts = run_with_retries(CLOSED, runner, retries=3)
    assert attempts.kept is valid and attempts.discarded == tuple(runs[:3])
    gaps = [b - a for a, b in itertools.pairwise(started)]
    assert gaps[0] >= FIRST_RETRY_PAUSE_S and gaps[1] >= 2 * FIRST_RETRY_PAUSE_S, gaps
    assert gaps[2] < FIRST_RETRY_PAUSE_S / 2, gaps
    assert pause_before_rerun(waited, 10) == LONGEST_RETRY_PAUSE_S
