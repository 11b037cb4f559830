"""Who ran on a server's CPUs, with real processes and no sockets: the test's own threads
and the processes it spawned count as the load's own (the harness), wherever they ran;
a busy loop that is no descendant of the test counts as another process's."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import psutil
import pytest

from pytest_netbench._host.cpus import available_cpus, pinned_thread
from pytest_netbench._model import ServerStats
from pytest_netbench._servers.sampling import ProcessTreeSampler

CPUS = available_cpus()
SERVER_CPU = CPUS[-1]
OTHER_CPU = CPUS[0]
SPIN_S = 0.3  # of CPU time, so a neighbour of the CI machine cannot make it less

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc for every figure"
)


@pytest.fixture
def idle_server() -> Iterator[int]:
    """A 'server' that sleeps, pinned to SERVER_CPU: everything on its CPU is someone else."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    psutil.Process(proc.pid).cpu_affinity([SERVER_CPU])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(10)


def spin(cpu_seconds: float = SPIN_S) -> None:
    start = time.thread_time()
    while time.thread_time() - start < cpu_seconds:
        pass


def ended(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def sampled(pid: int, during: Callable[[], None]) -> ServerStats:
    sampler = ProcessTreeSampler(pid, 0.05)
    sampler.start()
    try:
        during()
    finally:
        stats = sampler.stop()
    return stats


def test_the_tests_own_thread_on_the_servers_cpu_is_the_harness(idle_server: int) -> None:
    def pinned_spin() -> None:
        with pinned_thread([SERVER_CPU]):
            spin()

    stats = sampled(idle_server, pinned_spin)
    assert stats.cpus == (SERVER_CPU,)
    assert stats.harness_cpu_s == pytest.approx(SPIN_S, abs=0.08), stats
    assert stats.cpus_busy_s >= SPIN_S - 0.05, stats


@pytest.mark.skipif(len(CPUS) < 2, reason="needs a CPU apart from the server's")
def test_the_tests_own_thread_on_another_cpu_is_not_charged_there(idle_server: int) -> None:
    def pinned_spin() -> None:
        with pinned_thread([OTHER_CPU]):
            spin()

    stats = sampled(idle_server, pinned_spin)
    assert stats.harness_cpu_s < 0.05, stats


def test_a_worker_process_that_ended_before_the_last_sample_is_the_harness(
    idle_server: int,
) -> None:
    # As a load's worker processes end (and are reaped) before the sampler stops.
    code = (
        f"import os, time; os.sched_setaffinity(0, {{{SERVER_CPU}}}); t = time.process_time()\n"
        f"while time.process_time() - t < {SPIN_S}: pass"
    )

    def worker() -> None:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=30)

    stats = sampled(idle_server, worker)
    # The interpreter's start-up is the worker's too.
    assert SPIN_S - 0.05 <= stats.harness_cpu_s <= SPIN_S + 0.2, stats


def test_a_busy_loop_that_is_no_descendant_is_another_processs(
    idle_server: int, neighbour: Callable[..., psutil.Process]
) -> None:
    def neighbour_spins() -> None:
        loop = neighbour(SERVER_CPU, SPIN_S)
        deadline = time.monotonic() + 10
        while not ended(loop):
            assert time.monotonic() < deadline, "the busy loop did not end"
            time.sleep(0.02)

    stats = sampled(idle_server, neighbour_spins)
    assert stats.host_other_cpu_s >= SPIN_S - 0.05, stats
    assert stats.harness_cpu_s < 0.1, stats
