"""Server start-up, failure reports, logs and stopping, against real subprocesses."""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

import psutil
import pytest

from pytest_netbench._errors import (
    InterpreterNotFound,
    ServerCrashed,
    ServerError,
    ServerStartupError,
    SpecError,
)
from pytest_netbench._servers import ports
from pytest_netbench._servers.launcher import Server
from pytest_netbench._servers.readiness import HttpReady, LogReady
from pytest_netbench._servers.spec import ServerSpec


def get(server: Server, path: str = "/") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_start_serve_stop(helpers, tmp_path: Path):
    server = Server(helpers.netserver_command(), log_dir=tmp_path, name="hello")
    with server:
        assert server.running
        assert server.interpreter is not None and server.interpreter.path == sys.executable
        assert get(server) == (200, b"Hello World!")
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert server.ws_url == f"ws://127.0.0.1:{server.port}"
        assert server.startup_s is not None and server.startup_s > 0
        assert server.log_path is not None and server.log_path.startswith(str(tmp_path))
        assert "hello" in os.path.basename(server.log_path)
        pid = server.pid
    assert pid is not None and not helpers.alive(pid)
    assert not server.running
    assert server.returncode == -signal.SIGTERM
    with pytest.raises(ServerError, match="was stopped"):
        server.check_alive()
    # The reserved port is free again for whoever comes next.
    ports.claim_port("127.0.0.1", server.port).release()


def test_exit_during_startup_is_reported_at_once_with_code_and_log(helpers, tmp_path: Path):
    server = Server(
        helpers.netserver_command("--exit-code", "3"), startup_timeout=30, log_dir=tmp_path
    )
    with pytest.raises(ServerStartupError) as info:
        server.start()
    # The start-up timeout is 30 s: an error that names the exit, not the timeout, was
    # raised when the process ended, not when the wait ran out.
    message = str(info.value)
    assert "did not become ready" not in message
    assert "exited with code 3 during start-up" in message
    assert "fatal: refusing to start" in message
    assert "banner: netserver" in message
    assert str(server.log_path) in message


def test_killed_by_signal_during_startup_names_the_signal(tmp_path: Path):
    cmd = ["sh", "-c", 'echo "about to crash on $1"; kill -SEGV $$', "sh", "{port}"]
    with pytest.raises(ServerStartupError) as info:
        Server(cmd, log_dir=tmp_path).start()
    assert "was killed by signal SIGSEGV" in str(info.value)
    assert "about to crash on" in str(info.value)


def test_startup_timeout_kills_the_server(helpers, tmp_path: Path):
    server = Server(
        helpers.netserver_command("--banner-delay", "60"), startup_timeout=0.5, log_dir=tmp_path
    )
    with pytest.raises(ServerStartupError, match=r"did not become ready within 0\.5 s"):
        server.start()
    assert server.pid is not None and not helpers.alive(server.pid)


def test_crash_after_ready_is_reported_by_check_alive(helpers, tmp_path: Path):
    with Server(helpers.netserver_command(), log_dir=tmp_path) as server:
        server.check_alive()
        os.kill(server.pid, signal.SIGKILL)
        assert helpers.wait_until(lambda: not server.running)
        with pytest.raises(ServerCrashed) as info:
            server.check_alive()
    message = str(info.value)
    assert "was killed by signal SIGKILL after it became ready" in message
    assert "banner: netserver" in message


def test_chatty_server_under_traffic_does_not_block(helpers, tmp_path: Path):
    # 64 KiB to stderr per request: 160 requests write 10 MiB, far beyond any pipe buffer.
    cmd = helpers.netserver_command("--chatty", str(64 * 1024))
    with Server(cmd, log_dir=tmp_path) as server:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
        for _ in range(160):
            conn.request("GET", "/")
            response = conn.getresponse()
            assert response.status == 200
            response.read()
        conn.close()
        server.check_alive()
        assert os.path.getsize(server.log_path) >= 160 * 64 * 1024
        assert server.log_tail(1) == "x" * (64 * 1024 - 1)


def test_log_tail_returns_the_last_lines(helpers):
    with Server(helpers.netserver_command()) as server:
        tail = server.log_tail(lines=1)
        assert tail.startswith("listening on 127.0.0.1:")
        assert "banner" in server.log_tail(lines=5)


def test_command_not_found_is_a_startup_error(tmp_path: Path):
    with pytest.raises(ServerStartupError, match="'no-such-server-binary' not found"):
        Server(["no-such-server-binary", "--port", "{port}"], log_dir=tmp_path).start()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"command": "python app.py --port {port}"}, "not a shell string"),
        ({"command": []}, "non-empty list"),
        ({"command": ["app", 8080]}, "must be a string"),
        ({"command": ["app"]}, "no {port} placeholder"),
        ({"command": ["app", "{port}"], "python": "pypy3"}, "no {python} placeholder"),
        ({"command": ["app", "{port}"], "port": 70000}, "integer 1-65535"),
        ({"command": ["app", "{port}"], "startup_timeout": 0}, "startup_timeout"),
        ({"command": ["app"], "port_pattern": "port=\\d+"}, "needs a group"),
        ({"command": ["app"], "port_pattern": "port=(\\d+"}, "not a valid regex"),
    ],
)
def test_bad_arguments_are_refused_before_anything_starts(kwargs, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        Server(**kwargs)


def test_not_started_server_explains_itself(helpers):
    server = Server(helpers.netserver_command())
    with pytest.raises(ServerError, match="start it first"):
        _ = server.url
    with pytest.raises(ServerError, match="not started"):
        server.check_alive()
    server.stop()  # harmless


def test_server_cannot_be_started_twice(helpers):
    with Server(helpers.netserver_command()) as server, pytest.raises(ServerError, match="already"):
        server.start()


def test_placeholders_in_env_and_a_shell_wrapper(helpers):
    # A wrapper that reads the port from the environment and does not exec.
    script = f'{helpers.python} {helpers.netserver} --port "$SERVER_PORT"; echo wrapper done'
    with Server(["sh", "-c", script], env={"SERVER_PORT": "{port}"}) as server:
        assert get(server)[0] == 200


def test_from_spec_uses_the_spec_recipe(helpers):
    spec = ServerSpec(
        name="fixture-hello",
        app="hello",
        command=(
            "{python}",
            helpers.netserver,
            "--host",
            "{host}",
            "--port",
            "{port}",
            "--announce",
        ),
        port_pattern=r"NETBENCH_LISTENING port=(\d+)",
        ready_log="listening on",
        ready_http_path="/",
        env={"FROM_SPEC": "1"},
    )
    with Server.from_spec(spec, env={"EXTRA": "2"}) as server:
        assert server.name == "fixture-hello"
        assert get(server)[0] == 200
        env = psutil.Process(server.pid).environ()
        assert env["FROM_SPEC"] == "1" and env["EXTRA"] == "2"
        assert env["NETBENCH_SERVER"]


def test_named_interpreter_that_is_missing(helpers):
    server = Server(helpers.netserver_command(), python="no-such-python3.99")
    with pytest.raises(InterpreterNotFound, match=r"'no-such-python3\.99' is not installed"):
        server.start()


def test_interpreter_path_that_is_missing(helpers, tmp_path: Path):
    server = Server(helpers.netserver_command(), python=str(tmp_path / "bin" / "python"))
    with pytest.raises(InterpreterNotFound, match="does not exist"):
        server.start()


def test_interpreter_that_cannot_run(helpers, tmp_path: Path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'broken interpreter' >&2\nexit 9\n")
    fake.chmod(0o755)
    with pytest.raises(InterpreterNotFound, match="exited with code 9"):
        Server(helpers.netserver_command(), python=str(fake)).start()


def test_pypy_runs_a_python_server(helpers):
    import shutil

    if shutil.which("pypy3") is None:
        pytest.skip("pypy3 is not installed (apt-get install pypy3)")
    with Server(helpers.netserver_command(), python="pypy3", ready=HttpReady("/")) as server:
        assert "pypy" in psutil.Process(server.pid).exe()
        assert get(server)[0] == 200
        assert server.interpreter is not None
        assert server.interpreter.implementation == "pypy"
        assert server.interpreter.label.startswith("PyPy ")


def test_server_started_from_a_short_lived_thread_outlives_it(helpers):
    # PR_SET_PDEATHSIG fires when the forking *thread* ends; the launcher must not let it.
    import threading

    holder: list[Server] = []
    thread = threading.Thread(
        target=lambda: holder.append(Server(helpers.netserver_command()).start())
    )
    thread.start()
    thread.join()
    with holder[0] as server:
        time.sleep(0.2)
        server.check_alive()
        assert get(server)[0] == 200


def test_readiness_check_and_load_use_the_same_literal_host(helpers):
    seen: list[str] = []

    def record(host: str, port: int) -> bool:
        seen.append(host)
        return _connects(host, port)

    with Server(helpers.netserver_command(), host="127.0.0.1", ready=record) as server:
        assert set(seen) == {"127.0.0.1"} and server.host == "127.0.0.1"


def _connects(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


def test_ready_log_pattern_that_never_appears(helpers, tmp_path: Path):
    server = Server(
        helpers.netserver_command(),
        ready=LogReady("^never printed$"),
        startup_timeout=0.5,
        log_dir=tmp_path,
    )
    with pytest.raises(ServerStartupError, match="no line of the server's output matches"):
        server.start()


def test_server_that_daemonizes_gets_a_hint(helpers, tmp_path: Path):
    script = f"{helpers.python} {helpers.netserver} --port $1 & echo backgrounded"
    server = Server(["sh", "-c", script, "sh", "{port}"], log_dir=tmp_path)
    with pytest.raises(ServerStartupError, match="exited with code 0 during start-up") as info:
        server.start()
    assert "run it in the foreground" in str(info.value)
    server_id = server._server_id
    assert server_id
    assert helpers.wait_until(lambda: not helpers.marked_with(server_id, "NETBENCH_SERVER"))


def test_missing_working_directory_is_named(helpers, tmp_path: Path):
    server = Server(helpers.netserver_command(), cwd=tmp_path / "gone", log_dir=tmp_path)
    with pytest.raises(ServerStartupError, match=r"working directory .*gone' does not exist"):
        server.start()
