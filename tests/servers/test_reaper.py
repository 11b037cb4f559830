"""The kill matrix: however the parent Python ends, no server process survives it.

Each case runs a real parent script (fixtures/parent.py) that starts one managed server and
then ends normally, raises, is interrupted with SIGINT, or is SIGKILLed (no atexit, no
finally). Survivors are looked for twice: by the marker in their environment, and by the
pids the server tree wrote to a pid file itself (independent of the marker).
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

from pytest_netbench._servers import reaper
from pytest_netbench._servers.launcher import Server

SERVER_KINDS = {
    "plain": ([], 1),
    "forking": (["--fork", "2"], 3),
    "children-leave-group": (["--fork", "2", "--setsid-children"], 3),
    "ignores-sigterm": (["--ignore-term", "--fork", "1"], 2),
}


def server_command(helpers, kind: str, pidfile: Path) -> tuple[list[str], int]:
    if kind == "sh-wrapper":
        # The shell does not exec: the real server is its child, with a forked child of its own.
        script = (
            f'{helpers.python} {helpers.netserver} --port "$1" --fork 1 --pidfile {pidfile}; '
            "echo wrapper still here"
        )
        return ["sh", "-c", script, "sh", "{port}"], 2
    extra, expected = SERVER_KINDS[kind]
    return helpers.netserver_command(*extra, "--pidfile", str(pidfile)), expected


def kill_marked(helpers, token: str) -> None:
    """Teardown safety net, so a failing case does not leave orphans for the next one."""
    for proc in helpers.marked_with(token):
        with contextlib.suppress(psutil.Error):
            proc.kill()


@pytest.mark.parametrize("kind", [*SERVER_KINDS, "sh-wrapper"])
@pytest.mark.parametrize("ending", ["normal", "exception", "sigint", "sigkill"])
def test_no_survivors(helpers, subprocess_env, tmp_path: Path, ending: str, kind: str):
    pidfile = tmp_path / "pids"
    command, expected_pids = server_command(helpers, kind, pidfile)
    scenario = ending if ending in ("normal", "exception") else "wait"
    parent = subprocess.Popen(
        [sys.executable, str(helpers.fixtures / "parent.py"), scenario, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env,
    )
    token = ""
    try:
        assert parent.stdin is not None and parent.stdout is not None
        assert parent.stderr is not None
        token = json.loads(parent.stdout.readline())["token"]
        line = parent.stdout.readline()
        if not line:
            parent.wait(timeout=30)
            pytest.fail(f"parent failed before the server was ready:\n{parent.stderr.read()}")
        info = json.loads(line)
        assert helpers.wait_until(lambda: len(helpers.read_pids(pidfile)) >= expected_pids)
        tree = {info["pid"], *helpers.read_pids(pidfile)}
        assert len(helpers.marked_with(token)) >= expected_pids

        if ending in ("normal", "exception"):
            parent.stdin.write(b"go\n")
            parent.stdin.flush()
        elif ending == "sigint":
            parent.send_signal(signal.SIGINT)
        elif ending == "sigkill":
            parent.kill()
        returncode = parent.wait(timeout=30)
        if ending == "normal":
            assert returncode == 0
        elif ending == "exception":
            assert returncode == 1
            assert b"boom inside the with-block" in parent.stderr.read()

        def all_gone() -> bool:
            return not helpers.marked_with(token) and not any(helpers.alive(p) for p in tree)

        assert helpers.wait_until(all_gone, timeout=10), (
            f"survivors: {[p.pid for p in helpers.marked_with(token)]}, "
            f"tree still alive: {[p for p in tree if helpers.alive(p)]}"
        )
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if token:
            kill_marked(helpers, token)
        for stream in (parent.stdin, parent.stdout, parent.stderr):
            if stream is not None:
                stream.close()


def test_watchdog_of_a_killed_parent_spares_other_owners(helpers, subprocess_env):
    def start_parent() -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(helpers.fixtures / "parent.py"),
                "wait",
                *helpers.netserver_command("--fork", "1"),
            ],
            stdout=subprocess.PIPE,
            env=subprocess_env,
        )
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        info.update(json.loads(proc.stdout.readline()))
        return proc, info

    victim, victim_info = start_parent()
    bystander, bystander_info = start_parent()
    victim_logs, bystander_logs = Path(victim_info["log_dir"]), Path(bystander_info["log_dir"])
    try:
        assert victim_logs != bystander_logs
        assert victim_logs.is_dir() and bystander_logs.is_dir()
        victim.kill()
        victim.wait(timeout=10)
        assert helpers.wait_until(lambda: not helpers.marked_with(str(victim_info["token"])))
        # The watchdog removed the dead owner's logs, and nothing of the live one's.
        assert helpers.wait_until(lambda: not victim_logs.exists())
        assert helpers.alive(int(bystander_info["pid"]))
        assert helpers.marked_with(str(bystander_info["token"]))
        assert any(bystander_logs.glob("*.log"))
        bystander.send_signal(signal.SIGINT)
        bystander.wait(timeout=20)
        assert helpers.wait_until(lambda: not helpers.marked_with(str(bystander_info["token"])))
        assert not bystander_logs.exists()  # its own exit removed it: no failed server
    finally:
        for proc, info in ((victim, victim_info), (bystander, bystander_info)):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            kill_marked(helpers, str(info["token"]))
            if proc.stdout is not None:
                proc.stdout.close()


@pytest.mark.parametrize("ending", ["sigint", "sigkill"])
def test_no_survivors_when_the_parent_dies_during_startup(
    helpers, subprocess_env, tmp_path: Path, ending: str
):
    pidfile = tmp_path / "pids"
    cmd = helpers.netserver_command(
        "--banner-delay", "30", "--fork", "1", "--setsid-children", "--pidfile", str(pidfile)
    )
    parent = subprocess.Popen(
        [sys.executable, str(helpers.fixtures / "parent.py"), "wait", *cmd],
        stdout=subprocess.PIPE,
        env=subprocess_env,
    )
    assert parent.stdout is not None
    token = json.loads(parent.stdout.readline())["token"]
    try:
        assert helpers.wait_until(lambda: len(helpers.read_pids(pidfile)) >= 2)
        tree = helpers.read_pids(pidfile)
        parent.send_signal(signal.SIGINT if ending == "sigint" else signal.SIGKILL)
        parent.wait(timeout=30)

        def all_gone() -> bool:
            return not helpers.marked_with(token) and not any(helpers.alive(p) for p in tree)

        assert helpers.wait_until(all_gone, timeout=10)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        kill_marked(helpers, token)
        parent.stdout.close()


def test_sweep_kills_what_this_process_left_running(helpers, subprocess_env):
    # In a child Python: a sweep here would also hit servers other tests keep running.
    code = textwrap.dedent(
        f"""
        import json
        from pytest_netbench._servers import reaper
        from pytest_netbench._servers.launcher import Server
        server = Server(["{{python}}", {helpers.netserver!r}, "--port", "{{port}}", "--fork", "1"])
        server.start()
        found = reaper.sweep_owner(grace=1.0)
        token = reaper.marker_env("")[reaper.OWNER_ENV]
        print(json.dumps({{"found": found, "token": token, "pid": server.pid}}))
        server.stop()  # still fine after the sweep
        print(server.returncode)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=subprocess_env, timeout=60
    )
    assert out.returncode == 0, out.stderr.decode()
    first, second = out.stdout.decode().splitlines()
    info = json.loads(first)
    assert info["found"] >= 2  # the server and its forked child
    # The sweep reaped the child itself, so subprocess can only report a bare 0 here.
    assert int(second) in (0, -signal.SIGTERM)
    assert not helpers.alive(info["pid"])
    assert not helpers.marked_with(info["token"])


def test_marker_chain_keeps_an_outer_owner(monkeypatch):
    monkeypatch.delenv(reaper.OWNER_ENV, raising=False)
    ours = reaper.marker_env("server-0")[reaper.OWNER_ENV]
    monkeypatch.setenv(reaper.OWNER_ENV, "outer-run")
    env = reaper.marker_env("server-1")
    assert env[reaper.OWNER_ENV] == f"outer-run:{ours}"
    assert env[reaper.SERVER_ENV] == "server-1"


def test_stop_reaches_children_that_left_the_group(helpers, tmp_path: Path):
    pidfile = tmp_path / "pids"
    cmd = helpers.netserver_command("--fork", "2", "--setsid-children", "--pidfile", str(pidfile))
    with Server(cmd) as server:
        assert helpers.wait_until(lambda: len(helpers.read_pids(pidfile)) >= 3)
        pids = helpers.read_pids(pidfile)
        assert server.pid in pids
    assert not any(helpers.alive(p) for p in pids)


def test_stop_escalates_to_sigkill_for_a_server_ignoring_sigterm(helpers):
    server = Server(helpers.netserver_command("--ignore-term"), stop_timeout=0.3)
    with server:
        pass
    assert server.returncode == -signal.SIGKILL


def test_graceful_server_gets_sigterm_once_and_exits_cleanly(helpers, tmp_path: Path):
    term_log = tmp_path / "terms"
    server = Server(helpers.netserver_command("--term-log", str(term_log)), stop_timeout=5)
    with server:
        pass
    assert server.returncode == 0
    assert term_log.read_text() == "SIGTERM\n"


def test_forked_child_exiting_does_not_sweep_its_parents_servers(helpers, subprocess_env):
    code = textwrap.dedent(
        f"""
        import os, sys
        from pytest_netbench._servers import reaper
        from pytest_netbench._servers.launcher import Server
        with Server(["{{python}}", {helpers.netserver!r}, "--port", "{{port}}"]) as server:
            child = os.fork()
            if child == 0:
                sys.exit(0)  # runs atexit, including the sweep, in the child
            os.waitpid(child, 0)
            server.check_alive()
            print("alive after the child's exit", flush=True)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=subprocess_env, timeout=60
    )
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().strip() == "alive after the child's exit"


def test_server_a_test_forgot_to_stop_is_gone_when_pytest_exits(pytester, helpers):
    pytester.makepyfile(
        f"""
        from pytest_netbench._servers import reaper
        from pytest_netbench._servers.launcher import Server

        FORGOTTEN = []

        def test_forgets_to_stop():
            command = ["{{python}}", {helpers.netserver!r}, "--port", "{{port}}", "--fork", "1"]
            FORGOTTEN.append(Server(command).start())
            token = reaper.marker_env("")[reaper.OWNER_ENV].split(":")[-1]
            print("OWNER", token, FORGOTTEN[0].pid)
        """
    )
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    found = re.search(r"OWNER (\w+) (\d+)", result.stdout.str())
    assert found is not None, result.stdout.str()
    token, pid = found.groups()
    assert helpers.wait_until(lambda: not helpers.marked_with(token))
    assert not helpers.alive(int(pid))


def test_restarted_watchdog_still_covers_servers_started_before(helpers, subprocess_env):
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        from pytest_netbench._servers import reaper
        from pytest_netbench._servers.launcher import Server
        command = ["{{python}}", {helpers.netserver!r}, "--port", "{{port}}", "--fork", "1"]
        first = Server(command).start()
        watchdog = reaper._current_owner().watchdog
        watchdog.kill()
        watchdog.wait()
        second = Server(command).start()  # starts a new watchdog
        token = reaper.marker_env("")[reaper.OWNER_ENV]
        print(token, first.pid, second.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no finally
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=subprocess_env, timeout=60
    )
    assert out.returncode == -signal.SIGKILL, out.stderr.decode()
    token, first_pid, second_pid = out.stdout.decode().split()
    try:
        assert helpers.wait_until(lambda: not helpers.marked_with(token), timeout=10)
        assert not helpers.alive(int(first_pid)) and not helpers.alive(int(second_pid))
    finally:
        kill_marked(helpers, token)
