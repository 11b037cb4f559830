"""Log directories of owners that are gone are cleared away; a live owner's never are.

Owners here are real processes (a short Python that makes its directory and then exits,
waits, or is SIGKILLed) working in this test's own temp dir, never the system one that
other runs share.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pytest_netbench._servers import logdirs, watchdog

OWNER = textwrap.dedent(
    """
    import os, signal, sys, time
    from pytest_netbench._servers import logdirs
    print(logdirs.create(sys.argv[1]), flush=True)
    if sys.argv[2] == "fork-and-die":  # a forked child outlives its SIGKILLed parent
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        os.kill(os.getpid(), signal.SIGKILL)
    if sys.argv[2] == "wait":
        time.sleep(60)
    """
)


@pytest.fixture
def owners(subprocess_env) -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def make_owner_dir(
    owners: list[subprocess.Popen[bytes]], env: dict[str, str], parent: Path, ending: str
) -> Path:
    """A directory made by a real owner that then "exit"s, "wait"s, is "sigkill"ed, or
    "fork-and-die"s."""
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(parent), "wait" if ending == "sigkill" else ending],
        stdout=subprocess.PIPE,
        env=env,
    )
    owners.append(proc)
    assert proc.stdout is not None
    path = Path(proc.stdout.readline().decode().strip())
    (path / "app-1.log").write_text("a line of log\n")
    if ending == "sigkill":
        proc.kill()
    if ending != "wait":
        assert proc.wait(timeout=30) == (0 if ending == "exit" else -signal.SIGKILL)
    return path


def test_ended_owners_beyond_the_newest_few_are_removed(owners, subprocess_env, tmp_path):
    ended = [make_owner_dir(owners, subprocess_env, tmp_path, "exit") for _ in range(3)]
    killed = make_owner_dir(owners, subprocess_env, tmp_path, "sigkill")
    live = make_owner_dir(owners, subprocess_env, tmp_path, "wait")
    older_version = tmp_path / f"{logdirs.PREFIX}nolock"  # no lock file: cannot tell
    older_version.mkdir()
    for age, path in enumerate([killed, *ended, live, older_version]):  # newest first
        os.utime(path, (1e9 - age * 100, 1e9 - age * 100))

    removed = logdirs.remove_abandoned(str(tmp_path), keep=2)

    assert sorted(removed) == sorted(map(str, ended[1:]))
    assert killed.exists() and ended[0].exists()  # the two newest ended ones
    assert live.exists() and (live / "app-1.log").exists()
    assert older_version.exists()
    assert sorted(logdirs.remove_abandoned(str(tmp_path), keep=0)) == sorted(
        [str(killed), str(ended[0])]
    )
    assert live.exists()


def test_a_live_owner_keeps_its_directory(owners, subprocess_env, tmp_path):
    live = make_owner_dir(owners, subprocess_env, tmp_path, "wait")
    assert not logdirs.remove_if_abandoned(str(live))
    assert live.exists()
    owners[0].kill()
    owners[0].wait()
    assert logdirs.remove_if_abandoned(str(live))
    assert not live.exists()


def test_a_forked_child_keeps_its_dead_parents_directory(owners, subprocess_env, tmp_path):
    made = make_owner_dir(owners, subprocess_env, tmp_path, "fork-and-die")
    holders = [p for p in psutil.process_iter() if _holds(p, made / logdirs.LOCK_NAME)]
    assert len(holders) == 1  # the forked child, nobody else
    try:
        assert not logdirs.remove_if_abandoned(str(made))
        assert made.exists()
    finally:
        holders[0].kill()
        holders[0].wait(timeout=10)
    assert logdirs.remove_if_abandoned(str(made))


def _holds(proc: psutil.Process, path: Path) -> bool:
    try:
        return any(f.path == str(path) for f in proc.open_files())
    except psutil.Error:
        return False


def test_only_an_empty_directory_is_removed_by_its_owner(tmp_path):
    made = Path(logdirs.create(str(tmp_path)))
    (made / "failed.log").write_text("evidence\n")
    logdirs.remove_if_empty(str(made))
    assert (made / "failed.log").exists()
    (made / "failed.log").unlink()
    logdirs.remove_if_empty(str(made))
    assert not made.exists()


def run_watchdog(env: dict[str, str], lines: list[str]) -> subprocess.CompletedProcess[bytes]:
    """The watchdog module as the reaper runs it, told ``lines``, then its owner is "gone"."""
    token = "test-token-" + os.urandom(4).hex()
    since = watchdog.start_ticks(os.getpid())
    return subprocess.run(
        [sys.executable, "-P", "-m", watchdog.__name__, token, str(since), "0.5"],
        input="".join(f"{line}\n" for line in lines).encode(),
        capture_output=True,
        env=env,
        timeout=30,
    )


@pytest.mark.parametrize("clean", [False, True])
def test_watchdog_removes_an_owners_logs_unless_it_exited_cleanly(
    owners, subprocess_env, tmp_path, clean
):
    killed = make_owner_dir(owners, subprocess_env, tmp_path, "sigkill")
    live = make_owner_dir(owners, subprocess_env, tmp_path, "wait")
    done = run_watchdog(
        subprocess_env, [f"d{killed}", f"d{live}", "+999999999", *(["clean"] if clean else [])]
    )
    assert done.returncode == 0, done.stderr.decode()
    assert killed.exists() == clean
    assert live.exists()  # a process still holds it


def test_watchdog_sweeps_what_carries_its_token(helpers, subprocess_env, tmp_path):
    token = "test-token-" + os.urandom(4).hex()
    since = watchdog.start_ticks(os.getpid())
    marked = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={**subprocess_env, "NETBENCH_OWNER": f"outer:{token}"},
    )
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert helpers.wait_until(lambda: bool(helpers.marked_with(token)))
        dog = subprocess.Popen(
            [sys.executable, "-P", "-m", watchdog.__name__, token, str(since), "0.5"],
            stdin=subprocess.PIPE,
            env=subprocess_env,
        )
        assert dog.stdin is not None
        # A Ctrl-C that ends the owner must not end the watchdog: it ignores SIGINT.
        assert helpers.wait_until(lambda: ignores_sigint(dog.pid), timeout=10)
        dog.send_signal(signal.SIGINT)
        dog.stdin.close()
        assert dog.wait(timeout=30) == 0
        assert marked.wait(timeout=5) == -signal.SIGTERM
        assert bystander.poll() is None
    finally:
        for proc in (marked, bystander):
            proc.kill()
            proc.wait()


def ignores_sigint(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as f:
        ignored = next(line for line in f if line.startswith("SigIgn:")).split()[1]
    return bool(int(ignored, 16) & (1 << (signal.SIGINT - 1)))


def test_orders_read_from_the_pipe() -> None:
    orders = watchdog.Orders()
    orders.read(["+12\n", "+13\n", "-12\n", "d/tmp/x y\n", "+garbage\n", "clean\n"])
    assert orders.groups == {13}
    assert orders.directories == {"/tmp/x y"}
    assert orders.clean


def test_start_ticks_of_this_process_and_of_none() -> None:
    assert watchdog.start_ticks(os.getpid()) > 0
    assert watchdog.start_ticks(2**22 + 12345) == 0  # above pid_max: no such process
