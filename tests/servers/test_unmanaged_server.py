"""The CLI against a server it did not start (issue 30): it samples the process listening on
the target's port, so the server's CPU and the host's other work beside it are measured
and flagged as for a managed server. The CLI runs as a real subprocess; the servers are
started by the test, so they are no descendants of the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from pytest_netbench import HttpReady, Server, catalog
from pytest_netbench._host.cpus import available_cpus

CPUS = available_cpus()
SERVER_CPU = CPUS[-1]
GENERATOR_CPU = CPUS[0]
APPS = str(Path(__file__).parent / "fixtures")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_netbench.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)


def http_json(url: str, tmp_path: Path, *flags: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "result.json"
    done = cli("http", url, *flags, "--json", str(out))
    assert done.returncode in (0, 5), done.stderr
    data: dict[str, Any] = json.loads(out.read_text())
    return data, done.stdout


def test_the_process_tree_listening_on_the_port_is_sampled(tmp_path: Path) -> None:
    pytest.importorskip("gunicorn")
    bind = ["-b", "{host}:{port}", "--chdir", APPS, "tiny_apps:wsgi"]
    command = ["{python}", "-m", "gunicorn", "-k", "sync", "-w", "2", *bind]
    with Server(command, ready=HttpReady("/")) as srv:
        assert srv.port is not None
        master = srv.pid  # the launcher starts gunicorn itself: its master
        data, text = http_json(srv.url + "/", tmp_path, "-c", "4", "-n", "400")
    server = data["server"]
    assert server is not None and server["pid"] == master
    assert server["processes_peak"] == 3  # the master and its two workers
    assert server["cpu_user_s"] + server["cpu_system_s"] > 0
    assert f"Server (pid {master})" in text


def test_server_pid_names_the_tree_or_turns_sampling_off(tmp_path: Path) -> None:
    with Server.from_spec(catalog.get("asyncio_streams", "hello")) as srv:
        assert srv.pid is not None
        data, _ = http_json(srv.url + "/", tmp_path, "-c", "2", "-n", "100", "--server-pid", "0")
        assert data["server"] is None
        named, _ = http_json(
            srv.url + "/", tmp_path, "-c", "2", "-n", "100", "--server-pid", str(srv.pid)
        )
        assert named["server"]["pid"] == srv.pid
        missing = cli("http", srv.url + "/", "-n", "10", "--server-pid", "999999999")
    assert missing.returncode == 2
    assert "--server-pid 999999999: no such process on this machine" in missing.stderr
    # pid 1 holds every process, this command too: its work would read as the server's.
    init = cli("http", "http://127.0.0.1:9/", "-n", "1", "--server-pid", "1")
    assert init.returncode == 2 and "this command runs inside that process tree" in init.stderr


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs: one for the server, one for the load")
def test_a_busy_loop_beside_a_server_the_cli_did_not_start_is_flagged(
    tmp_path: Path, neighbour: Callable[..., psutil.Process]
) -> None:
    with Server.from_spec(catalog.get("asyncio_streams", "hello"), cpus=str(SERVER_CPU)) as srv:
        neighbour(SERVER_CPU)
        data, text = http_json(
            srv.url + "/", tmp_path, "-c", "10", "-d", "1s", "--cpus", str(GENERATOR_CPU)
        )
    assert not data["valid"]
    assert "host_contention" in data["invalid_causes"]
    assert "INVALID: host contention" in text
