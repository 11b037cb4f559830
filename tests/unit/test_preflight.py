"""Pre-flight: a load that this machine cannot hold is spread or refused before any socket
exists, with what to change. Limits are lowered in child processes only."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from pytest_netbench import ResourceLimitError
from pytest_netbench._host.kernel import local_port_count, sysctl_int, tcp_ext_counter
from pytest_netbench._host.preflight import plan_load
from pytest_netbench._input.spec import echo_spec
from pytest_netbench._model import LoadSpec


def run_with_nofile(soft: int, hard: int, body: str) -> subprocess.CompletedProcess[str]:
    code = "import resource\n"
    code += f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard}))\n"
    code += textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_share_too_big_for_one_process_is_spread_over_workers() -> None:
    done = run_with_nofile(
        600,
        700,
        """
        from pytest_netbench._host.preflight import plan_load
        from pytest_netbench._input.spec import echo_spec
        spec, notes = plan_load(echo_spec("127.0.0.1", 9, connections=1500, duration=1))
        print(spec.workers)
        print(notes[0])
        """,
    )
    assert done.returncode == 0, done.stderr
    workers, note = done.stdout.splitlines()
    assert int(workers) == 3  # 636 sockets a process after headroom
    assert "spread over 3 worker processes" in note
    assert "700 open files" in note


def test_a_process_that_may_hold_almost_nothing_is_refused_not_spread() -> None:
    done = run_with_nofile(
        128,
        256,
        """
        from pytest_netbench import ResourceLimitError
        from pytest_netbench._host.preflight import plan_load
        from pytest_netbench._input.spec import echo_spec
        try:
            plan_load(echo_spec("127.0.0.1", 9, connections=1000, duration=1))
        except ResourceLimitError as exc:
            print("refused:", exc)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:")
    assert "hard limit is 256" in done.stdout


@pytest.fixture
def server_with_few_files() -> Iterator[int]:
    """A process (standing in for a managed server) that may hold 100 open files."""

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))

    proc = subprocess.Popen(["sleep", "30"], preexec_fn=lower)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_a_server_that_cannot_hold_the_connections_is_refused_naming_its_limit(
    server_with_few_files: int,
) -> None:
    spec = echo_spec("127.0.0.1", 9, connections=500, duration=1)
    with pytest.raises(ResourceLimitError) as caught:
        plan_load(spec, server_pid=server_with_few_files)
    message = str(caught.value)
    assert f"pid {server_with_few_files}" in message
    assert "at most 100 open files" in message
    assert "ulimit -n" in message
    plan_load(
        echo_spec("127.0.0.1", 9, connections=50, duration=1), server_pid=server_with_few_files
    )


def test_a_load_that_fits_is_left_alone() -> None:
    spec = echo_spec("127.0.0.1", 9, connections=10, duration=1)
    assert plan_load(spec) == (spec, ())


def test_more_connections_than_one_source_address_has_ports_are_spread_or_refused() -> None:
    ports = local_port_count()
    if ports is None:
        pytest.skip("no /proc/sys/net/ipv4/ip_local_port_range here")
    many = ports + 10
    # Built directly: the checks of echo_spec are not what is under test here.
    spec, notes = plan_load(
        LoadSpec(kind="echo", host="127.0.0.1", port=9, connections=many, duration_s=1.0)
    )
    assert spec.source_addresses[:2] == ("127.0.0.1", "127.0.0.2")
    assert any("source addresses 127.0.0.1..127.0.0." in n for n in notes)
    with pytest.raises(ResourceLimitError, match="ip_local_port_range"):
        plan_load(LoadSpec(kind="echo", host="::1", port=9, connections=many, duration_s=1.0))


def test_kernel_readers_see_this_linux_host() -> None:
    assert isinstance(sysctl_int("net.core.somaxconn"), int)
    assert isinstance(tcp_ext_counter("ListenOverflows"), int)
    assert tcp_ext_counter("NoSuchCounter") is None
    assert sysctl_int("no.such.setting") is None
