"""CPU sets and host contention, with real servers: a server pinned where it was told, a
generator pinned for its load, and a server that shares its core with a CPU hog reported
as measuring the host, not itself (more servers in test_host_contention.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from pytest_netbench import LoadProgress, Server, catalog, http_load
from pytest_netbench._host.cpus import available_cpus

CPUS = available_cpus()
SERVER_CPU = CPUS[-1]
GENERATOR_CPU = CPUS[0]


def allowed_cpus(pid: int) -> dict[int, str]:
    """Each thread of ``pid``: the CPUs it may run on, as the kernel lists them."""
    found: dict[int, str] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        line = next(row for row in status.splitlines() if row.startswith("Cpus_allowed_list"))
        found[int(tid)] = line.split(":", 1)[1].strip()
    return found


@pytest.fixture
def hello_server() -> Iterator[Server]:
    with Server.from_spec(catalog.get("asyncio_streams", "hello"), cpus=str(SERVER_CPU)) as srv:
        yield srv


@pytest.fixture
def cpu_hog(neighbour: Callable[..., psutil.Process]) -> None:
    """A busy loop on the server's CPU, the noisy neighbour of an unpinned benchmark (no
    descendant of the test: a process the test starts is one of the load's own)."""
    neighbour(SERVER_CPU)


def test_a_server_runs_its_whole_tree_on_its_cpus(hello_server: Server) -> None:
    assert hello_server.pid is not None
    assert set(allowed_cpus(hello_server.pid).values()) == {str(SERVER_CPU)}


def test_a_load_runs_its_generator_on_its_cpus_and_leaves_the_caller_as_it_was(
    hello_server: Server,
) -> None:
    seen: list[set[int]] = []

    def progress(report: LoadProgress) -> None:  # called in the thread running the load
        seen.append(os.sched_getaffinity(0))

    before = os.sched_getaffinity(0)
    r = http_load(
        hello_server.url, connections=2, duration=1.2, cpus=str(GENERATOR_CPU), progress=progress
    )
    assert r.ok > 0
    assert seen and all(cpus == {GENERATOR_CPU} for cpus in seen)
    assert os.sched_getaffinity(0) == before


def test_a_server_that_waited_for_its_cpu_is_called_contended(
    hello_server: Server, cpu_hog: None
) -> None:
    r = http_load(
        hello_server.url,
        server=hello_server,
        connections=10,
        duration=1.0,
        cpus=str(GENERATOR_CPU) if len(CPUS) > 1 else None,
    )
    assert r.server is not None
    # The hog is always runnable on the server's only CPU: it takes what the server leaves
    # and makes the server wait for its turn.
    assert r.server.cpu_wait_share >= 0.2, r.server
    assert r.server.host_other_share >= 0.2, r.server
    assert not r.valid
    assert "host_contention" in r.invalid_causes
    reason = next(t for t in r.invalid_reasons if t.startswith("host contention"))
    assert "pin the server away from them" in reason
    # Not the server's fault: a rerun may be valid, and searches never count it against it.
    assert r.invalid_by_generator_only


def test_a_lightly_loaded_server_is_not_called_contended(hello_server: Server) -> None:
    r = http_load(hello_server.url, server=hello_server, rate=20, duration=1.0)
    assert r.server is not None and r.server.cpu_wait_s >= 0
    assert "host_contention" not in r.invalid_causes
