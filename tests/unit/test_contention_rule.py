"""Host contention is CPU other processes took from the server's CPUs, never the server's
own threads queueing for its cores: the attribution arithmetic, the rule, and the
figures' JSON and text forms (no sockets, no processes)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from pytest_netbench._model import LoadResult, LoadSpec, ServerStats
from pytest_netbench._report.summary import format_result
from pytest_netbench._servers.host_cpu import contended_wait, others_cpu
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

NS = 1_000_000_000
SPEC = LoadSpec(kind="http", host="127.0.0.1", port=8080, duration_s=1.0)


def server(
    threads: list[tuple[float, float]], *, others: float, harness: float = 0.0, cores: int = 1
) -> ServerStats:
    """A server of ``threads`` (seconds running, waiting) over a 1 s span on ``cores``, its
    CPUs busy with its own time, the harness's and the others'."""
    ran = sum(run for run, _ in threads)
    busy = ran + harness + others
    return ServerStats(
        pid=1,
        cpu_user_s=ran,
        cpu_wait_s=sum(wait for _, wait in threads),
        cpus=tuple(range(1, cores + 1)),
        sampled_s=1.0,
        cpus_busy_s=busy,
        harness_cpu_s=harness,
        host_other_cpu_s=others_cpu(busy, ran, harness),
        contended_wait_s=contended_wait(threads, others_cpu(busy, ran, harness), busy),
    )


def judged(stats: ServerStats) -> LoadResult:
    outcome = WorkerOutcome(window_start_ns=NS, window_end_ns=2 * NS, cpu_s=0.2, busy_s=0.3)
    return merge_outcomes(SPEC, [outcome], stats)


def test_others_are_what_ran_on_the_cpus_less_the_server_and_the_harness() -> None:
    assert others_cpu(1.0, 0.6, 0.1) == pytest.approx(0.3)
    # Busy time and the server's own come from different clocks: never below nothing.
    assert others_cpu(0.9, 0.95, 0.0) == 0.0
    assert math.isnan(others_cpu(math.nan, 0.5, 0.0))
    assert math.isnan(others_cpu(1.0, 0.5, math.nan))


def test_a_one_thread_server_waits_behind_the_others_alone() -> None:
    # It cannot wait behind itself: all of its wait was behind what else ran there.
    assert contended_wait([(0.6, 0.3)], others_s=0.4, busy_s=1.0) == pytest.approx(0.3)
    # ... shared with the harness (the generator) in proportion to their CPU.
    assert contended_wait([(0.5, 0.3)], others_s=0.25, busy_s=1.0) == pytest.approx(0.15)


def test_threads_queueing_for_their_own_core_wait_behind_each_other() -> None:
    eight = [(0.12, 0.8)] * 8  # gthread -w 2 --threads 4 on one core: 6.4 s of waiting
    assert contended_wait(eight, others_s=0.0, busy_s=0.96) == 0.0
    # A neighbour's 4 % of the core accounts for about 4 % of their wait, not more.
    share = contended_wait(eight, others_s=0.04, busy_s=1.0) / 6.4
    assert 0.04 <= share <= 0.05


def test_unknown_figures_stay_unknown() -> None:
    assert math.isnan(contended_wait([(0.5, 0.5)], others_s=math.nan, busy_s=1.0))
    assert math.isnan(contended_wait([(0.5, 0.5)], others_s=0.2, busy_s=math.nan))
    assert contended_wait([], others_s=0.5, busy_s=1.0) == 0.0


def test_a_server_queueing_for_its_own_cores_is_valid_and_says_so_as_a_figure() -> None:
    stats = server([(0.12, 0.8)] * 8, others=0.0)
    assert stats.cpu_wait_share > 0.85  # what the old rule called contention
    assert stats.runnable_per_core == pytest.approx((0.96 + 6.4) / 1.0)
    result = judged(stats)
    assert "host_contention" not in result.invalid_causes, result.invalid_reasons


def test_the_generator_beside_an_unpinned_server_is_the_set_ups_own() -> None:
    # Go's threads and the generator on the same 2 cores, nobody else there.
    stats = server([(0.4, 0.35), (0.4, 0.35)], others=0.0, harness=0.9, cores=2)
    assert "host_contention" not in judged(stats).invalid_causes


def test_a_neighbour_the_server_waited_behind_is_host_contention() -> None:
    stats = server([(0.3, 0.35), (0.3, 0.35)], others=0.4)  # a busy loop beside two workers
    result = judged(stats)
    assert result.invalid_causes == ("host_contention",)
    (reason,) = result.invalid_reasons
    assert reason.startswith("host contention: other processes took 40% of the server's CPUs")
    assert "(core 1: 0.40 s of CPU in 1.00 s)" in reason
    assert "pin the server away from them" in reason
    assert result.invalid_by_generator_only  # a rerun may be valid


def test_a_neighbour_the_server_hardly_waited_behind_is_not() -> None:
    # A lightly loaded server beside a busy loop: its few wake-ups waited a little.
    stats = server([(0.02, 0.03)], others=0.95)
    assert stats.host_other_share == pytest.approx(0.95)
    assert "host_contention" not in judged(stats).invalid_causes


def test_a_lightly_loaded_server_on_a_busy_machine_is_not() -> None:
    # The README's Go example at 1,000 req/s on 2 unpinned cores while another clone's
    # test suite took half of them: its wake-ups waited behind it, 8 % of its CPUs' time.
    stats = server([(0.04, 0.06)] * 4, others=1.2, harness=0.2, cores=2)
    assert stats.contended_wait_s / (stats.cpu_s + stats.cpu_wait_s) > 0.25
    assert 0.05 < stats.contended_wait_s / 2.0 < 0.15
    assert "host_contention" not in judged(stats).invalid_causes


def test_results_without_the_host_figures_are_not_judged() -> None:
    # Stored before they existed, or sampled where /proc says nothing.
    stats = ServerStats(pid=1, cpu_user_s=0.5, cpu_wait_s=0.5)
    assert math.isnan(stats.runnable_per_core) and math.isnan(stats.host_other_share)
    assert judged(stats).valid


def test_the_new_figures_survive_json_and_show_in_the_summary() -> None:
    stats = server([(0.3, 0.35), (0.3, 0.35)], others=0.4)
    result = judged(stats)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["server"]["cpus"] == [1]
    assert data["server"]["host_other_cpu_s"] == pytest.approx(0.4)
    assert data["server"]["runnable_per_core"] == pytest.approx(1.3)
    back = LoadResult.from_dict(data)
    assert back.server == stats
    assert dataclasses.replace(back, spec=None).to_dict() == {**data, "spec": None}
    text = " ".join(format_result(result).split())
    assert "cpus 1: 1.30 runnable threads per core (its own queueing)" in text
    assert "other processes ran 0.40 s on them (40%)" in text
