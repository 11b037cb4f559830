"""Starting a server under test, knowing when it is ready, and stopping all of it.

The server's stdout and stderr go to a log file (never an unread pipe, which a chatty
server would fill and then block on). Start-up waits on a readiness check while watching
the process, so an early exit is reported at once with its code or signal and the end of
the log. Stopping goes through :mod:`.reaper`, which leaves no process behind.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shlex
import subprocess
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import psutil

from pytest_netbench._errors import (
    PortInUseError,
    ServerCrashed,
    ServerError,
    ServerStartupError,
    SpecError,
)
from pytest_netbench._host.cpus import CpusArg, parse_cpus
from pytest_netbench._public import publish
from pytest_netbench._servers import logdirs, ports, reaper
from pytest_netbench._servers.command_line import (
    check_command,
    check_port_pattern,
    default_name,
    describe_exit,
    fill_in,
)
from pytest_netbench._servers.interpreters import InterpreterInfo, interpreter_info
from pytest_netbench._servers.profiling import NoProfile, RunningProfile, start_profile
from pytest_netbench._servers.readiness import (
    AllReady,
    Http2Ready,
    HttpReady,
    LogFollower,
    LogReady,
    ReadinessCheck,
    ReadinessContext,
    ReadySpec,
    TcpReady,
    as_check,
    format_address,
)
from pytest_netbench._servers.sampling import ProcessTreeSampler
from pytest_netbench._servers.spec import ServerSpec

_FIRST_POLL_S = 0.005
_MAX_POLL_S = 0.02
_TAIL_BYTES = 64 * 1024

_log_counter = itertools.count(1)
_default_log_dir: str | None = None
_default_log_dir_lock = threading.Lock()
# Logs in the default temp dir are removed at exit unless a server failed (then they are
# evidence the error message points at).
_logs_to_remove: set[str] = set()


# Servers started and not yet stopped, stopped properly at exit (the reaper's sweep, which
# runs after this, only catches what is left).
_live_servers: weakref.WeakSet[Server] = weakref.WeakSet()


_importing_pid = os.getpid()


def _at_exit() -> None:
    if os.getpid() != _importing_pid:
        return  # a forked child: the servers and their logs are its parent's
    for server in list(_live_servers):
        with contextlib.suppress(Exception):
            server.stop()
    for path in list(_logs_to_remove):
        with contextlib.suppress(OSError):
            os.remove(path)
    if _default_log_dir is not None:
        logdirs.remove_if_empty(_default_log_dir)


atexit.register(_at_exit)


def _log_dir_for(log_dir: str | os.PathLike[str] | None) -> tuple[str, bool]:
    global _default_log_dir
    if log_dir is not None:
        path = os.fspath(log_dir)
        os.makedirs(path, exist_ok=True)
        return path, False
    with _default_log_dir_lock:
        if _default_log_dir is None:
            # Our first server: clear away what owners that are gone left behind, then
            # make ours, which the watchdog removes should we die without exiting.
            logdirs.remove_abandoned()
            _default_log_dir = logdirs.create()
            reaper.remove_if_owner_dies(_default_log_dir)
        return _default_log_dir, True


class Server:
    """A server under test, started from an argument list; a context manager.

    ``command`` may use ``{host}``, ``{port}`` and ``{python}`` (the interpreter chosen by
    ``python=``). With ``port_pattern`` and no ``port``, the server binds port 0 and the
    port is read from the first output line matching the pattern (group 1). Otherwise a
    port is reserved outside the kernel's ephemeral range, under a cross-process lock.
    ``ready`` is a readiness check (default: a TCP connect to host:port). ``cpus`` pins the
    server's whole process tree to those CPUs (``"1"``, ``"2-3"``, ``[0, 2]``), so a load's
    generator can be pinned apart (the load's ``cpus=``). ``tls`` says the server speaks
    TLS, so its ``url`` is ``https://``.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        ready: ReadySpec = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout: float = 30.0,
        stop_timeout: float = 5.0,
        python: str | None = None,
        port_pattern: str | None = None,
        name: str | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        cpus: CpusArg = None,
        tls: bool = False,
    ) -> None:
        self._command = check_command(command)
        # The CPUs the server's whole tree runs on (``"1"``, ``"2-3"``); None: any.
        self.cpus = parse_cpus(cpus)
        self.tls = bool(tls)
        self._ready = as_check(ready)
        # A proxy's backend, when the proxy was started in front of a managed server: loads
        # at the proxy sample it too (LoadResult.backend).
        self.backend: Server | None = None
        if not isinstance(host, str) or not host:
            raise SpecError(f"host must be an address such as '127.0.0.1' or '::1', got {host!r}")
        self.host = host.strip("[]")
        if port is not None and (
            not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535
        ):
            raise SpecError(f"port must be an integer 1-65535 or None, got {port!r}")
        self._requested_port = port
        self._env = {str(k): str(v) for k, v in (env or {}).items()}
        self._cwd = os.fspath(cwd) if cwd is not None else None
        if not startup_timeout > 0:
            raise SpecError(f"startup_timeout must be positive seconds, got {startup_timeout!r}")
        if not stop_timeout >= 0:
            raise SpecError(f"stop_timeout must be >= 0 seconds, got {stop_timeout!r}")
        self.startup_timeout = float(startup_timeout)
        self.stop_timeout = float(stop_timeout)
        self._port_regex = check_port_pattern(port_pattern)
        self._python = python
        uses = " ".join([*self._command, *self._env.values()])
        if python is not None and "{python}" not in uses:
            raise SpecError(
                f"python={python!r} was given but the command has no {{python}} placeholder; "
                "write the command as ['{python}', 'server.py', ...]"
            )
        if port is None and self._port_regex is None and "{port}" not in uses:
            raise SpecError(
                "the command has no {port} placeholder, so the server cannot be told which "
                "port to use; add {port} to the command (or env), pass port_pattern= for a "
                "server that reports its own port, or pass port= for a fixed one"
            )
        self.name = name or default_name(self._command)
        self._log_dir = log_dir
        self.port: int | None = port
        self.pid: int | None = None
        self.log_path: str | None = None
        self.args: list[str] = []
        self.startup_s: float | None = None
        self.returncode: int | None = None
        # Which Python serves, for servers started through {python} (CPython vs PyPy).
        self.interpreter: InterpreterInfo | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._reservation: ports.PortReservation | None = None
        self._server_id = ""
        self._since = 0.0
        self._owner_pid = os.getpid()

    @classmethod
    def from_spec(cls, spec: ServerSpec, **overrides: Any) -> Server:
        """A server for a catalog (or user) :class:`ServerSpec`; keyword overrides win."""
        checks: list[ReadinessCheck] = []
        if spec.ready_log:
            checks.append(LogReady(spec.ready_log))
        if spec.ready_http_path:
            checks.append(HttpReady(spec.ready_http_path))
        if spec.ready_http2:
            checks.append(Http2Ready(tls=spec.tls))
        default_ready: ReadinessCheck = (
            TcpReady() if not checks else checks[0] if len(checks) == 1 else AllReady(*checks)
        )
        kwargs: dict[str, Any] = {
            "ready": default_ready,
            "port_pattern": spec.port_pattern,
            "cwd": spec.cwd,
            "python": spec.python,
            "startup_timeout": spec.startup_timeout_s,
            "name": spec.name,
            "tls": spec.tls,
        }
        env = {**spec.env, **(overrides.pop("env", None) or {})}
        kwargs.update(overrides)
        return cls(spec.command, env=env, **kwargs)

    # -- public views ----------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://host:port`` (IPv6 hosts in brackets); ``https://`` for a TLS server."""
        if self.port is None:
            raise ServerError(f"server {self.name!r} has no port yet; start it first")
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{format_address(self.host, self.port)}"

    @property
    def ws_url(self) -> str:
        """The same server as a WebSocket target: ``ws://host:port``, ``wss://`` over TLS."""
        return "ws" + self.url[len("http") :]

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines the server wrote (stdout and stderr merged)."""
        if self.log_path is None:
            return ""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - _TAIL_BYTES))
                data = f.read()
        except OSError:
            return ""
        text = data.decode("utf-8", "replace").rstrip("\n")
        return "\n".join(text.splitlines()[-lines:]) if lines > 0 else ""

    def check_alive(self) -> None:
        """Raise :class:`ServerCrashed` (exit code or signal, log tail) if the server died."""
        if self._proc is None:
            raise ServerError(f"server {self.name!r} was not started; call start() first")
        if self.returncode is not None:
            raise ServerError(f"server {self.name!r} was stopped; start a new Server")
        code = self._proc.poll()
        if code is not None:
            self._keep_log()
            raise ServerCrashed(self._failure(f"{describe_exit(code)} after it became ready"))

    def profiler(self) -> RunningProfile | NoProfile:
        """Start sampling this server's process tree's stacks (``profile=True``)."""
        if self.pid is None:
            raise ServerError(f"server {self.name!r} was not started; call start() first")
        return start_profile(self.pid)

    def monitor(self, interval: float = 0.1) -> ProcessTreeSampler:
        """A sampler of this server's process tree (not yet started), every ``interval`` s."""
        if self.pid is None:
            raise ServerError(f"server {self.name!r} was not started; call start() first")
        return ProcessTreeSampler(self.pid, interval, port=self.port)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped" if self._proc else "not started"
        where = format_address(self.host, self.port) if self.port else "no port"
        return f"<Server {self.name} {where} pid={self.pid} {state}>"

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Server:
        if self._proc is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Server:
        """Launch the server and wait until it is ready; raises ServerStartupError if not."""
        if self._proc is not None:
            raise ServerError(f"server {self.name!r} was already started; make a new Server")
        if "{python}" in " ".join([*self._command, *self._env.values()]):
            self.interpreter = interpreter_info(self._python)
        python = self.interpreter.path if self.interpreter else ""
        self._owner_pid = os.getpid()
        launched = time.monotonic()
        try:
            if self._requested_port is not None:
                self._reservation = ports.claim_port(self.host, self._requested_port)
                self.port = self._requested_port
            elif self._port_regex is None:
                self._reservation = ports.reserve_port(self.host)
                self.port = self._reservation.port
            port_text = str(self.port or 0)
            self.args = [fill_in(a, self.host, port_text, python) for a in self._command]
            self._launch(python, port_text)
            self._wait_ready(launched)
            self._check_listener_is_ours()
        except BaseException as exc:
            if isinstance(exc, Exception):  # a failure; not Ctrl-C or exit, which name no log
                self._keep_log()
            self._teardown()
            raise
        self.startup_s = time.monotonic() - launched
        _live_servers.add(self)
        return self

    def stop(self) -> None:
        """SIGTERM the whole tree, wait ``stop_timeout``, SIGKILL what is left. Idempotent."""
        self._teardown()

    def _launch(self, python: str, port_text: str) -> None:
        if self._cwd is not None and not os.path.isdir(self._cwd):
            raise ServerStartupError(
                f"cannot start server {self.name!r}: its working directory {self._cwd!r} "
                "does not exist"
            )
        log_dir, is_default = _log_dir_for(self._log_dir)
        safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name)[:60] or "server"
        self.log_path = os.path.join(log_dir, f"{safe_name}-{os.getpid()}-{next(_log_counter)}.log")
        self._server_id = uuid.uuid4().hex
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")  # a Python server's banner must reach the log
        env.update({k: fill_in(v, self.host, port_text, python) for k, v in self._env.items()})
        env.update(reaper.marker_env(self._server_id))
        with open(self.log_path, "wb") as log:
            if is_default:
                _logs_to_remove.add(self.log_path)
            try:
                # The child gets its own copy of the log fd; ours closes with this block.
                self._proc = reaper.spawn(
                    self.args,
                    cpus=self.cpus,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=self._cwd,
                )
            except FileNotFoundError:
                raise ServerStartupError(
                    f"cannot start server {self.name!r}: {self.args[0]!r} not found (not on "
                    f"PATH, or no such file); command was {shlex.join(self.args)}"
                ) from None
            except OSError as exc:
                raise ServerStartupError(
                    f"cannot start server {self.name!r}: {exc.strerror or exc}; "
                    f"command was {shlex.join(self.args)}"
                ) from None
        self.pid = self._proc.pid
        try:
            self._since = psutil.Process(self.pid).create_time()
        except psutil.Error:
            self._since = time.time() - 1.0

    def _wait_ready(self, launched: float) -> None:
        assert self._proc is not None and self.log_path is not None
        deadline = launched + self.startup_timeout
        follower = LogFollower(self.log_path)
        reason = "not checked yet"
        poll_s = _FIRST_POLL_S
        while True:
            code = self._proc.poll()
            if code is not None:
                elapsed = time.monotonic() - launched
                what = f"{describe_exit(code)} during start-up ({elapsed:.2f} s in)"
                raise ServerStartupError(self._failure(what + self._daemon_hint(code)))
            now = time.monotonic()
            if now >= deadline:
                raise ServerStartupError(self._timeout_message(reason))
            if self.port is None:
                reason = self._read_port(follower)
            if self.port is not None:
                ctx = ReadinessContext(self.host, self.port, follower, deadline - now)
                maybe_reason = self._ready.poll(ctx)
                if maybe_reason is None:
                    return
                reason = maybe_reason
            # Waiting on the process (not sleeping) notices an exit the moment it happens.
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=max(0.0, min(poll_s, deadline - time.monotonic())))
            poll_s = min(poll_s * 1.5, _MAX_POLL_S)

    def _read_port(self, follower: LogFollower) -> str:
        assert self._port_regex is not None
        match = follower.search(self._port_regex)
        if match is None:
            return f"no output line matches port_pattern {self._port_regex.pattern!r} yet"
        text = match.group(1)
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            raise ServerStartupError(
                self._failure(
                    f"printed {match.group(0)!r}, which matches port_pattern "
                    f"{self._port_regex.pattern!r} but whose group 1 ({text!r}) is not a port"
                )
            )
        self.port = int(text)
        return "port reported, not checked yet"

    def _check_listener_is_ours(self) -> None:
        """Refuse to benchmark another program that happens to hold the port."""
        if self.port is None or self.pid is None:
            return
        listeners = ports.listener_pids(self.port)
        if not listeners:
            return  # not visible (other user, other namespace): nothing to compare
        # The tree by parentage, plus marked processes that left it. Both are needed: nginx
        # overwrites its workers' environment with their process titles, markers included.
        ours = {self.pid}
        with contextlib.suppress(psutil.Error):
            ours |= {c.pid for c in psutil.Process(self.pid).children(recursive=True)}
        if not listeners & ours:
            marked = reaper.marked_processes(reaper.SERVER_ENV, self._server_id, 0.0)
            ours |= {p.pid for p in marked}
        if listeners & ours:
            return
        raise PortInUseError(
            self._failure(
                f"did not bind port {self.port}: it is held by "
                f"{ports.describe_listener(self.port)}, which answered the readiness check "
                "instead; stop that process, or let netbench choose a port (port=None)"
            )
        )

    def _daemon_hint(self, code: int) -> str:
        if code != 0:
            return ""
        left = reaper.marked_processes(reaper.SERVER_ENV, self._server_id, self._since)
        if not left:
            return ""
        return (
            f", leaving {len(left)} process(es) running: it seems to daemonize or run in the "
            "background; run it in the foreground (e.g. nginx -g 'daemon off;', no trailing "
            "'&' in a wrapper script)"
        )

    def _timeout_message(self, reason: str) -> str:
        where = format_address(self.host, self.port) if self.port else "(port not known yet)"
        text = (
            f"did not become ready within {self.startup_timeout:g} s at {where}, "
            f"waiting for {self._ready.describe()}; last check: {reason}"
        )
        if self.pid is not None:
            pids = {self.pid}
            with contextlib.suppress(psutil.Error):
                pids |= {c.pid for c in psutil.Process(self.pid).children(recursive=True)}
            listening = ports.listening_addresses(pids)
            if listening:
                text += f"; the server's processes listen on {', '.join(listening)}"
                if self.port and all(not a.startswith(where) for a in listening):
                    text += f" - not on {where}: check the address family and host it binds"
        return self._failure(text)

    def _failure(self, what: str) -> str:
        tail = self.log_tail(20) or "(the log is empty)"
        return (
            f"server {self.name!r} {what}\n"
            f"  command: {shlex.join(self.args) if self.args else self._command}\n"
            f"  log: {self.log_path}\n"
            f"--- last lines of the log ---\n{tail}"
        )

    def _keep_log(self) -> None:
        if self.log_path is not None:
            _logs_to_remove.discard(self.log_path)

    def _teardown(self) -> None:
        if self._owner_pid != os.getpid():
            # A forked copy of this object (os.fork, multiprocessing) does not own the
            # server; stopping it, or unlocking its port, would pull it from under the parent.
            return
        _live_servers.discard(self)
        proc = self._proc
        if proc is not None and self.returncode is None:
            reaper.terminate_server(proc, self._server_id, self._since, self.stop_timeout)
            self.returncode = proc.returncode
        if self._reservation is not None:
            self._reservation.release()
            self._reservation = None


publish(globals())
