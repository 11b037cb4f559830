"""Profiles of managed servers (``profile=True``), with the real profilers: py-spy on
gunicorn with two workers, perf on a native server, on the catalog's Go server and on
Debian's nginx (stripped, its exported ngx_ functions named); and what stands in the way
of one, in one line, the load running all the same."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netbench import Server, ToolchainMissing, http_load
from pytest_netbench._model import ServerProfile
from pytest_netbench._servers import catalog
from pytest_netbench._servers.profiling import elf_symbols, find_py_spy, perf_problem

HERE = Path(__file__).parent / "profiled"
NETBENCH = [sys.executable, "-m", "pytest_netbench.cli"]
needs_py_spy = pytest.mark.skipif(find_py_spy() is None, reason="the profile extra (py-spy)")
needs_perf = pytest.mark.skipif(bool(perf_problem()), reason=perf_problem() or "perf")


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """hot_httpd.c built with symbols."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    binary = tmp_path_factory.mktemp("native") / "hot_httpd"
    subprocess.run(
        [
            "gcc",
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            "-o",
            str(binary),
            str(HERE / "hot_httpd.c"),
        ],
        check=True,
        timeout=60,
    )
    return binary


@needs_py_spy
def test_gunicorn_with_two_workers_is_profiled_by_py_spy() -> None:
    command = [sys.executable, "-m", "gunicorn", "-w", "2", "-b", "{host}:{port}", "hot_wsgi:app"]
    with Server(command, cwd=HERE, name="gunicorn-hot") as server:
        r = http_load(server.url, server=server, connections=4, duration=1.0, profile=True)
    assert r.ok > 0 and r.errors_total == 0
    profile = r.profile
    assert profile is not None and profile.problem == "", profile
    assert profile.tool == "py-spy"
    assert profile.processes == 3  # the arbiter and its two workers
    # The workers answered: their stacks are under the server's process.
    assert any(s.startswith("[server process];[child process];") for s in profile.folded)
    top = profile.hottest(1)[0]
    assert top.name.startswith("render_page"), profile.hottest(5)
    assert top.self_share > 0.3
    assert top.self_cpu_ms_per_request <= profile.cpu_ms_per_request
    assert profile.ok > 0 and profile.cpu_ms_per_request > 0


@needs_perf
def test_a_native_server_is_profiled_by_perf(native: Path) -> None:
    with Server([str(native)], port_pattern=r"port (\d+)", name="hot-httpd") as server:
        r = http_load(server.url, server=server, connections=1, duration=1.0, profile=True)
    assert r.ok > 0
    profile = r.profile
    assert profile is not None and profile.problem == "", profile
    assert profile.tool == "perf"
    top = profile.hottest(1)[0]
    assert top.name == "checksum_body", profile.hottest(5)
    assert profile.samples > 50


def _catalog_profile(name: str) -> ServerProfile:
    """Catalog server ``name`` loaded for a second and profiled (skipped where it cannot
    run)."""
    try:
        spec = catalog.get(name)
    except ToolchainMissing as exc:
        pytest.skip(f"{name} cannot run here: {exc}")
    with Server.from_spec(spec) as server:
        r = http_load(server.url, server=server, connections=4, duration=1.0, profile=True)
    assert r.ok > 0 and r.errors_total == 0
    profile = r.profile
    assert profile is not None and profile.problem == "", profile
    assert profile.tool == "perf" and profile.samples > 50
    assert profile.ok > 0 and profile.cpu_ms_per_request > 0
    return profile


@needs_perf
def test_the_go_server_is_profiled_by_perf_through_its_frame_pointers() -> None:
    profile = _catalog_profile("go")
    names = [f.name for f in profile.functions(30)]
    # Whole stacks, from the goroutine's start: net/http's connection loop holds a
    # handler's time, and the runtime's scheduler is there (the rest of a load's time).
    assert "net/http.(*conn).serve" in names, names
    assert any(name.startswith("runtime.") for name in names), names
    serve = next(f for f in profile.functions(30) if f.name == "net/http.(*conn).serve")
    assert serve.total_share > 0.1, serve


@needs_perf
def test_stripped_nginx_is_profiled_by_perf_with_its_exported_functions() -> None:
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        pytest.skip("needs nginx (Debian: apt-get install nginx-light)")
    profile = _catalog_profile("nginx")
    functions = profile.functions(40)
    names = [f.name for f in functions]
    # Debian's nginx is stripped of its symbol table but exports its ngx_ functions; its
    # stacks, built without frame pointers, are unwound from .eh_frame: the worker's
    # event loop is in every one of its stacks, and the HTTP request path under it.
    assert "ngx_process_events_and_timers" in names[:15], names
    http = [f for f in functions if f.name.startswith("ngx_http_")]
    assert http and http[0].total_share > 0.05, names
    assert all(not name.startswith("[[") for name in names), names


@needs_perf
def test_a_stripped_binary_is_one_line_and_the_load_runs(native: Path, tmp_path: Path) -> None:
    stripped = tmp_path / "hot_httpd_stripped"
    shutil.copy(native, stripped)
    subprocess.run(["strip", str(stripped)], check=True, timeout=30)
    with Server([str(stripped)], port_pattern=r"port (\d+)", name="hot-stripped") as server:
        r = http_load(server.url, server=server, connections=1, duration=0.5, profile=True)
    assert r.ok > 0
    assert r.profile is not None and r.profile.samples == 0
    assert "is stripped" in r.profile.problem and "\n" not in r.profile.problem


def test_what_perf_can_name_in_a_binary(native: Path, tmp_path: Path) -> None:
    built = elf_symbols(str(native))
    assert built is not None and built.symtab and built.names_functions and not built.go
    stripped = tmp_path / "hot_httpd_stripped"
    shutil.copy(native, stripped)
    subprocess.run(["strip", str(stripped)], check=True, timeout=30)
    bare = elf_symbols(str(stripped))
    assert bare is not None and not bare.symtab and not bare.names_functions
    assert elf_symbols(str(HERE / "hot_wsgi.py")) is None  # not an ELF file


def test_without_a_managed_server_profile_says_so(native: Path) -> None:
    with Server([str(native)], port_pattern=r"port (\d+)", name="hot-unwatched") as server:
        r = http_load(server.url, connections=1, duration=0.3, profile=True)
    assert r.ok > 0
    assert r.profile is not None
    assert r.profile.problem.startswith("profile=True needs a server")


@needs_perf
@pytest.mark.parametrize("named", [False, True], ids=["behind-its-port", "by-server-pid"])
def test_the_command_profiles_the_server_behind_the_port(native: Path, named: bool) -> None:
    with Server([str(native)], port_pattern=r"port (\d+)", name="hot-cli") as server:
        assert server.pid is not None
        command = [*NETBENCH, "http", server.url, "-c", "1", "-d", "1", "--profile"]
        by_pid = ["--server-pid", str(server.pid)] if named else []
        done = subprocess.run(
            [*command, *by_pid], capture_output=True, text=True, timeout=120, check=False
        )
    assert "Server profile (perf, " in done.stdout, done.stdout + done.stderr
    assert "checksum_body" in done.stdout


def test_the_command_says_when_there_is_no_server_to_profile() -> None:
    # Port 9 on loopback: nothing listens there, and nothing is sent.
    done = subprocess.run(
        [*NETBENCH, "http", "http://127.0.0.1:9/", "--profile"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.endswith("listens on the target's port: give it with --server-pid PID")
