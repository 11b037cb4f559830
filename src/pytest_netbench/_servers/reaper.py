"""Making sure every process a server run starts is gone afterwards.

Four layers, each covering a hole the others leave:

* every server gets its own session (hence process group), so one ``killpg`` reaches
  the server and whatever it forked without re-parenting;
* the direct child asks the kernel for ``PR_SET_PDEATHSIG`` so it dies with its parent;
* every process carries marker variables in its environment (``NETBENCH_OWNER`` naming
  the Python process that launched it, ``NETBENCH_SERVER`` naming the server), which its
  descendants inherit even when they leave the group with ``setsid``;
* a tiny watchdog process, fed by a pipe, notices the owner's death (even by SIGKILL,
  when no ``atexit`` runs) and sweeps the marked processes and registered groups.

Processes are only ever picked by marker plus start time, never by name.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import psutil

OWNER_ENV = "NETBENCH_OWNER"
SERVER_ENV = "NETBENCH_SERVER"

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.02
_ATEXIT_GRACE_S = 2.0

# The watchdog is plain stdlib reading /proc, so it starts in milliseconds and cannot be
# broken by whatever the package __init__ imports. Lines on stdin: "+<pgid>" registers a
# server's process group, "-<pgid>" forgets it; EOF means the owner is gone.
_WATCHDOG_SOURCE = r"""# pytest-netbench watchdog: sweeps its owner's servers when the owner dies
import os, signal, sys, time
token, since, grace = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(sig, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        groups.add(int(line[1:]))
    elif line[:1] == "-":
        groups.discard(int(line[1:]))
me = os.getpid()
def survivors():
    pids, live_groups = [], set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2:].split()
            if fields[0] in (b"Z", b"X") or int(fields[19]) < since:
                continue
            if int(fields[2]) in groups:
                live_groups.add(int(fields[2]))
            with open("/proc/%s/environ" % name, "rb") as f:
                env = f.read()
        except (OSError, ValueError, IndexError):
            continue
        for entry in env.split(b"\0"):
            if entry.startswith(b"NETBENCH_OWNER="):
                if token in entry[15:].decode("ascii", "replace").split(":"):
                    pids.append(int(name))
                break
    return pids, live_groups
start = time.monotonic()
signalled = set()  # SIGTERM goes once to each group and pid; SIGKILL as often as needed
while time.monotonic() - start < grace + 10:
    pids, live_groups = survivors()
    if not pids and not live_groups:
        break
    killing = time.monotonic() - start >= grace
    sig = signal.SIGKILL if killing else signal.SIGTERM
    for pgid in live_groups:
        if killing or ("g", pgid) not in signalled:
            signalled.add(("g", pgid))
            try:
                os.killpg(pgid, sig)
            except OSError:
                pass
    for pid in pids:
        if killing or pid not in signalled:
            signalled.add(pid)
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    time.sleep(0.05)
"""


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


def owner_token() -> str:
    """The marker value identifying processes started by this Python process."""
    return _current_owner().token


def marker_env(server_id: str) -> dict[str, str]:
    """Environment entries that tag a server's whole tree as ours.

    An inherited owner chain is kept (``outer:ours``), so a netbench run that is itself a
    managed server is swept by its own owner too.
    """
    inherited = os.environ.get(OWNER_ENV, "")
    token = _current_owner().token
    chain = f"{inherited}:{token}" if inherited else token
    return {OWNER_ENV: chain, SERVER_ENV: server_id}


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


def _child_setup(parent_pid: int) -> Callable[[], None]:
    def setup() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # The parent may have died between fork and prctl; then nobody would signal us.
        if os.getppid() != parent_pid:
            os._exit(1)

    return setup


def spawn(args: list[str], **popen_kwargs: Any) -> subprocess.Popen[bytes]:
    """Start a server process in its own session with a death signal and the watchdog armed.

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
            preexec_fn=_child_setup(parent_pid),
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
        since = _start_ticks(os.getpid())
        env = {k: v for k, v in os.environ.items() if k not in (OWNER_ENV, SERVER_ENV)}
        try:
            owner.watchdog = _start_watchdog(owner.token, since, env)
        except OSError:
            # The other layers (group, death signal, atexit) still work without it.
            owner.watchdog = None
            return
    for pgid in sorted(owner.groups):  # a restarted watchdog learns what is running
        _tell_watchdog(f"+{pgid}")


def _start_watchdog(token: str, since: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            _WATCHDOG_SOURCE,
            token,
            str(since),
            str(_ATEXIT_GRACE_S),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=env,
        start_new_session=True,
    )


def _start_ticks(pid: int) -> int:
    """Start time in clock ticks since boot, the unit of /proc/<pid>/stat field 22."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rfind(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def _tell_watchdog(line: str) -> None:
    owner = _current_owner()
    with owner.lock:
        if line.startswith("+"):
            owner.groups.add(int(line[1:]))
        elif line.startswith("-"):
            owner.groups.discard(int(line[1:]))
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
    proc: subprocess.Popen[bytes], server_id: str, since: float, grace_s: float
) -> None:
    """SIGTERM the server's group and every process carrying its marker, then SIGKILL.

    Each process gets SIGTERM once (a server shutting down gracefully must not be hit
    again mid-shutdown); whatever is left after ``grace_s`` gets SIGKILL. Returns when none
    is left alive (zombies re-parented to init do not count).
    """
    pgid = proc.pid
    deadline = time.monotonic() + grace_s
    terminated: set[int] = set()
    group_terminated = False
    while True:
        leader_alive = proc.poll() is None
        stragglers = marked_processes(SERVER_ENV, server_id, since)
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


def sweep_owner(grace_s: float = _ATEXIT_GRACE_S) -> int:
    """Kill every live process this Python process started; returns how many were found."""
    owner = _current_owner()
    if not owner.launched:
        return 0  # never launched anything
    found = marked_processes(OWNER_ENV, owner.token, owner.create_time)
    if not found:
        return 0
    _signal_all(found, signal.SIGTERM)
    alive = _wait_gone(found, grace_s)
    _signal_all(alive, signal.SIGKILL)
    _wait_gone(alive, 1.0)
    return len(found)


def _wait_gone(procs: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Those of ``procs`` still alive after ``timeout_s``; zombies count as gone.

    (psutil.wait_procs would wait the whole timeout for a zombie that init never reaps.)
    """
    deadline = time.monotonic() + timeout_s
    while True:
        alive = [p for p in procs if _is_alive(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(_POLL_S)


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
    # Closing the pipe tells the watchdog we are done; it finds nothing left and exits.
    # Reaping it here keeps it from lingering as a zombie (and Popen from warning).
    owner = _owner
    if owner.pid == os.getpid() and owner.watchdog is not None:
        with contextlib.suppress(Exception):
            if owner.watchdog.stdin is not None:
                owner.watchdog.stdin.close()
            owner.watchdog.wait(timeout=1.0)


atexit.register(_sweep_at_exit)
