"""Making sure every process a server run starts is gone afterwards.

Four layers, each covering a hole the others leave:

* every server gets its own session (hence process group), so one ``killpg`` reaches
  the server and whatever it forked without re-parenting;
* the direct child asks the kernel for ``PR_SET_PDEATHSIG`` so it dies with its parent;
* every process carries marker variables in its environment (``NETBENCH_OWNER`` naming
  the Python process that launched it, ``NETBENCH_SERVER`` naming the server), which its
  descendants inherit even when they leave the group with ``setsid``;
* a tiny watchdog process (:mod:`.watchdog`), fed by a pipe, notices the owner's death
  (even by SIGKILL, when no ``atexit`` runs) and sweeps the marked processes and
  registered groups, then the owner's log directory.

Processes are only ever picked by marker plus start time, never by name.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import queue
import signal
import site
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import psutil

from pytest_netbench._host.cpus import pin_this_process
from pytest_netbench._servers import watchdog

OWNER_ENV = "NETBENCH_OWNER"
SERVER_ENV = "NETBENCH_SERVER"

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.02
_ATEXIT_GRACE_S = 2.0


class _Owner:
    """Per-process state: the owner token, the watchdog pipe, the spawner thread."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.token = uuid.uuid4().hex
        self.create_time = psutil.Process().create_time()
        self.lock = threading.Lock()
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.launched = False
        self.groups: set[int] = set()  # process groups of servers not yet stopped
        self.directories: set[str] = set()  # removed by the watchdog if we die abruptly
        self.spawn_queue: queue.SimpleQueue[_SpawnRequest] | None = None


class _SpawnRequest:
    def __init__(self, factory: Callable[[], subprocess.Popen[bytes]]) -> None:
        self.factory = factory
        self.done = threading.Event()
        self.result: subprocess.Popen[bytes] | None = None
        self.error: BaseException | None = None


_owner = _Owner()
# Owners a forked child inherited: kept referenced so their Popen objects never warn.
_inherited_owners: list[_Owner] = []


def _current_owner() -> _Owner:
    """This process's owner; a forked child becomes a new owner on first use.

    Checked lazily rather than in an at-fork hook: subprocess runs those hooks in every
    child it forks with a preexec_fn, i.e. in each server between fork and exec.
    """
    global _owner
    if _owner.pid != os.getpid():
        _inherited_owners.append(_owner)
        _owner = _Owner()
    return _owner


def marker_env(server_id: str) -> dict[str, str]:
    """Environment entries that tag a server's whole tree as ours.

    An inherited owner chain is kept (``outer:ours``), so a netbench run that is itself a
    managed server is swept by its own owner too.
    """
    inherited = os.environ.get(OWNER_ENV, "")
    token = _current_owner().token
    chain = f"{inherited}:{token}" if inherited else token
    return {OWNER_ENV: chain, SERVER_ENV: server_id}


def remove_if_owner_dies(path: str) -> None:
    """Have the watchdog remove directory ``path`` if this process ends without exiting.

    (A normal exit leaves ``path`` to the process itself, whose ``atexit`` code decides
    what to keep.)
    """
    if "\n" not in path:  # one line on the watchdog's pipe
        _tell_watchdog(f"d{path}")


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return prctl


# Resolved once in the parent: the child side of fork must not dlopen anything.
_prctl = _load_prctl()


def _child_setup(parent_pid: int, cpus: Sequence[int] = ()) -> Callable[[], None]:
    def setup() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # The parent may have died between fork and prctl; then nobody would signal us.
        if os.getppid() != parent_pid:
            os._exit(1)
        # Before exec, so every thread and child the server starts inherits the set.
        pin_this_process(cpus)

    return setup


def spawn(
    args: list[str], *, cpus: Sequence[int] = (), **popen_kwargs: Any
) -> subprocess.Popen[bytes]:
    """Start a server process in its own session with a death signal and the watchdog armed,
    on ``cpus`` when it names some.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, so children are
    forked only from the main thread or from one long-lived spawner thread, never from a
    short-lived worker thread that would take the server down with it.
    """
    _ensure_watchdog()
    _current_owner().launched = True
    parent_pid = os.getpid()

    def factory() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            args,
            start_new_session=True,
            preexec_fn=_child_setup(parent_pid, cpus),
            **popen_kwargs,
        )

    if threading.current_thread() is threading.main_thread():
        proc = factory()
    else:
        proc = _spawn_on_spawner_thread(factory)
    _tell_watchdog(f"+{proc.pid}")
    return proc


def _spawn_on_spawner_thread(
    factory: Callable[[], subprocess.Popen[bytes]],
) -> subprocess.Popen[bytes]:
    owner = _current_owner()
    with owner.lock:
        if owner.spawn_queue is None:
            owner.spawn_queue = queue.SimpleQueue()
            thread = threading.Thread(
                target=_spawner_loop, args=(owner.spawn_queue,), name="netbench-spawner"
            )
            thread.daemon = True
            thread.start()
        spawn_queue = owner.spawn_queue
    request = _SpawnRequest(factory)
    spawn_queue.put(request)
    request.done.wait()
    if request.error is not None:
        raise request.error
    assert request.result is not None
    return request.result


def _spawner_loop(requests: queue.SimpleQueue[_SpawnRequest]) -> None:
    while True:
        request = requests.get()
        try:
            request.result = request.factory()
        except BaseException as exc:  # handed back to the caller's thread
            request.error = exc
        request.done.set()


def _ensure_watchdog() -> None:
    owner = _current_owner()
    with owner.lock:
        if owner.watchdog is not None and owner.watchdog.poll() is None:
            return
        since = watchdog.start_ticks(os.getpid())
        try:
            owner.watchdog = _start_watchdog(owner.token, since)
        except OSError:
            # The other layers (group, death signal, atexit) still work without it.
            owner.watchdog = None
            return
    # A new or restarted watchdog learns what is running and what to clear away.
    for pgid in sorted(owner.groups):
        _tell_watchdog(f"+{pgid}")
    for path in sorted(owner.directories):
        _tell_watchdog(f"d{path}")


def _start_watchdog(token: str, since: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-P", "-m", watchdog.__name__, token, str(since), str(_ATEXIT_GRACE_S)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=_watchdog_env(),
        start_new_session=True,
    )


def _watchdog_env() -> dict[str, str]:
    """Our environment without the markers, and with this package importable by ``-m``.

    The package's folder goes on PYTHONPATH unless it is a site-packages folder (found
    anyway, and which must not come before the standard library): this process may have
    found the package through a sys.path entry that a child does not inherit.
    """
    env = {k: v for k, v in os.environ.items() if k not in (OWNER_ENV, SERVER_ENV)}
    package_parent = str(Path(__file__).resolve().parents[2])
    site_dirs = {
        str(Path(p).resolve()) for p in [*site.getsitepackages(), site.USER_SITE or ""] if p
    }
    if package_parent not in site_dirs:
        paths = [package_parent, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _tell_watchdog(line: str) -> None:
    owner = _current_owner()
    with owner.lock:
        if line.startswith("+"):
            owner.groups.add(int(line[1:]))
        elif line.startswith("-"):
            owner.groups.discard(int(line[1:]))
        elif line.startswith("d"):
            owner.directories.add(line[1:])
    watchdog = owner.watchdog
    if watchdog is None or watchdog.stdin is None:
        return
    with contextlib.suppress(OSError, ValueError):
        watchdog.stdin.write(line.encode() + b"\n")
        watchdog.stdin.flush()


def marked_processes(variable: str, value: str, since: float) -> list[psutil.Process]:
    """Live processes whose environment has ``value`` in ``variable`` (a ``:`` chain).

    ``since`` is a psutil create_time: anything older cannot be ours (pid reuse guard).
    """
    found: list[psutil.Process] = []
    me = os.getpid()
    for proc in psutil.process_iter():
        if proc.pid == me:
            continue
        try:
            if proc.create_time() < since - 0.05 or proc.status() == psutil.STATUS_ZOMBIE:
                continue
            marker = proc.environ().get(variable)
        except (psutil.Error, OSError):
            continue
        if marker is not None and value in marker.split(":"):
            found.append(proc)
    return found


def terminate_server(
    proc: subprocess.Popen[bytes], server_id: str, since: float, grace: float
) -> None:
    """SIGTERM the server's group and every process carrying its marker, then SIGKILL.

    Each process gets SIGTERM once (a server shutting down gracefully must not be hit
    again mid-shutdown); whatever is left after ``grace`` gets SIGKILL. Returns when none
    is left alive (zombies re-parented to init do not count).
    """
    pgid = proc.pid
    deadline = time.monotonic() + grace
    terminated: set[int] = set()
    # Every process found once is watched until it is gone: one that is exiting can no
    # longer show its environment, so the marker search alone would lose it too early.
    seen: dict[int, psutil.Process] = {}
    group_terminated = False
    while True:
        leader_alive = proc.poll() is None
        found = marked_processes(SERVER_ENV, server_id, since)
        seen.update((p.pid, p) for p in found)
        stragglers = [p for p in seen.values() if p.pid != pgid and _is_running(p)]
        if not leader_alive and not stragglers:
            break
        in_group = {p.pid for p in stragglers if _pgid_of(p) == pgid}
        # The group id stays ours while the leader is unreaped or a member lives on.
        group_alive = leader_alive or bool(in_group)
        if time.monotonic() >= deadline:
            if group_alive:
                _killpg(pgid, signal.SIGKILL)
            _signal_all(stragglers, signal.SIGKILL)
            if time.monotonic() > deadline + 5.0:
                break  # unkillable (D state); give up rather than hang the test run
        else:
            if group_alive and not group_terminated:
                _killpg(pgid, signal.SIGTERM)
                group_terminated = True
                terminated |= in_group | {pgid}
            fresh = [p for p in stragglers if p.pid not in terminated]
            _signal_all(fresh, signal.SIGTERM)
            terminated |= {p.pid for p in fresh}
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_POLL_S)
    _tell_watchdog(f"-{pgid}")


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _pgid_of(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except OSError:
        return None


def _signal_all(procs: Iterable[psutil.Process], sig: signal.Signals) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error, OSError):
            proc.send_signal(sig)


def sweep_owner(grace: float = _ATEXIT_GRACE_S) -> int:
    """Kill every live process this Python process started; returns how many were found."""
    owner = _current_owner()
    if not owner.launched:
        return 0  # never launched anything
    found = marked_processes(OWNER_ENV, owner.token, owner.create_time)
    if not found:
        return 0
    _signal_all(found, signal.SIGTERM)
    alive = _wait_gone(found, grace)
    _signal_all(alive, signal.SIGKILL)
    _wait_gone(alive, 1.0)
    return len(found)


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Those of ``procs`` still alive after ``timeout``; zombies count as gone.

    (psutil.wait_procs would wait the whole timeout for a zombie that init never reaps.)
    """
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in procs if _is_alive(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(_POLL_S)


def _is_running(proc: psutil.Process) -> bool:
    """Alive and not a zombie, without reaping (the leader's status belongs to Popen)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _is_alive(proc: psutil.Process) -> bool:
    try:
        # Reap our own children so they do not linger as zombies.
        with contextlib.suppress(ChildProcessError):
            os.waitpid(proc.pid, os.WNOHANG)
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _sweep_at_exit() -> None:
    with contextlib.suppress(Exception):
        sweep_owner()
    # "clean" leaves our directories to the launcher's own atexit code (it keeps the logs
    # of failed servers); closing the pipe tells the watchdog we are done; it finds
    # nothing left and exits. Reaping it here keeps it from lingering as a zombie (and
    # Popen from warning).
    owner = _owner
    if owner.pid == os.getpid() and owner.watchdog is not None:
        _tell_watchdog("clean")
        with contextlib.suppress(Exception):
            if owner.watchdog.stdin is not None:
                owner.watchdog.stdin.close()
            owner.watchdog.wait(timeout=1.0)


atexit.register(_sweep_at_exit)
