"""Running a load's shares, and where they run: behind one small transport interface.

``run_workers`` splits the load and hands the shares to a :class:`WorkerTransport`, which
brings back one :class:`WorkerOutcome` per share. Two transports exist: this thread (one
worker) and spawned local processes. A transport that runs shares on other hosts has the
same shape: ship ``(spec, share)`` out, call ``run_share(spec, share, released_ns, watch)``
there with the instant the share arrived (``WorkerShare.start_at``), ship the outcome back;
while it runs, ship its progress snapshots back (they carry the share index) and a stop
request out (see ``watch``).

Workers are spawned (not forked) so a parent that runs threads or an event loop of its own
(pytest with plugins, an async application) hands nothing half-locked to its children. A
spawned worker re-runs the parent's main script as it starts (as ``__mp_main__``): a script
that starts a load at its top level, not under ``if __name__ == "__main__":``, would start
it again there. The worker then exits with :data:`_IMPORTING_MAIN_EXIT` before any load of
its own, and the parent says what to change (:func:`refuse_while_importing_main`). A main
script that is no file (one fed on standard input, ``python -``) cannot be re-run at all:
that is found before any worker is spawned, and said with what to do
(:func:`unrunnable_main_script`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from time import monotonic_ns
from typing import TYPE_CHECKING, Protocol, TypeAlias

from pytest_netbench._engine.asyncio_io.connect_phase import phase_limit_s
from pytest_netbench._engine.rules.clocks import NS_PER_S
from pytest_netbench._engine.rules.share import WorkerShare, split_load
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.shares.driver import prepare_share, run_share
from pytest_netbench._errors import (
    FeederExhausted,
    FlowError,
    NetbenchError,
    TargetUnreachableError,
)
from pytest_netbench._model import LoadSpec
from pytest_netbench._model.live import ShareSnapshot
from pytest_netbench._stats.recorder import WorkerOutcome

if TYPE_CHECKING:  # multiprocessing is imported when workers are spawned (a one-worker
    # load, the CLI's common case, runs in this thread and needs none of it: issue 35)
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnContext
    from multiprocessing.process import BaseProcess

# How long after its last possible end a load with a duration may take to bring its
# outcomes back (a busy machine, a slow share's last writes) before its shares are lost.
_GRACE_S = 30.0
# A worker's failure that is the target's (TargetUnreachableError), not the worker's.
_UNREACHABLE = "unreachable: "
_RAN_OUT = "feeder ran out: "
# A worker's exit code when the script it re-ran as it started began a load at its top level.
_IMPORTING_MAIN_EXIT = 86
_IMPORTING_MAIN = "importing main"
_WORKER_NAME = "netbench-worker-"
# Shares that open their connections first start their windows this long after the last
# one is ready, so that every worker process is awake by then.
_WINDOW_MARGIN_NS = 20_000_000
# The longest local worker processes may take to start and import what their shares need
# (a machine swapping, a cold disk) before the parent releases those that are ready.
_READY_LIMIT_S = 60.0


# What runs one share where it lands: the engine's load (``driver.run_share``), or another
# kind of load (a user flow) given by a picklable callable of the same shape.
ShareRunner: TypeAlias = Callable[[LoadSpec, WorkerShare, int, ShareWatch | None], WorkerOutcome]


class WorkerFailed(NetbenchError):
    """A load worker process died or raised."""


class WorkerTransport(Protocol):
    """Runs shares of a load somewhere and brings their outcomes back, in share order."""

    # How long after their release the shares start: time for the workers to get ready.
    start_delay_s: float

    def run_shares(
        self,
        spec: LoadSpec,
        shares: Sequence[WorkerShare],
        watch: ShareWatch | None = None,
        runner: ShareRunner = run_share,
    ) -> list[WorkerOutcome]:
        """Run every share to its end with ``runner``; raise :class:`WorkerFailed` if any
        could not.

        With a ``watch``, each share's snapshots reach ``watch.report`` (from any thread)
        and a stop that ``watch.stop_requested`` asks for reaches every share: a transport
        builds a :class:`ShareWatch` where each share runs that carries both.
        """
        ...


class InThisThread:
    """The shares run one after another in the calling thread (one worker: no process to
    start, so no delay)."""

    start_delay_s = 0.0

    def run_shares(
        self,
        spec: LoadSpec,
        shares: Sequence[WorkerShare],
        watch: ShareWatch | None = None,
        runner: ShareRunner = run_share,
    ) -> list[WorkerOutcome]:
        return [runner(spec, share, monotonic_ns(), watch) for share in shares]


class LocalProcesses:
    """One spawned process per share. Each says when it is ready (started, and what its
    share needs imported); once all are, the parent releases them at one instant, and all
    start their shares ``start_delay_s`` after it (``CLOCK_MONOTONIC`` is system-wide on
    Linux, so their windows line up). Waiting for them rather than for a fixed delay
    starts a load as soon as its workers can, and never late on a slow machine.

    Each worker talks to the parent over one pipe: progress snapshots and its outcome up,
    a ``"stop"`` down. Workers ignore SIGINT: a Ctrl-C at the terminal reaches the whole
    process group, and the parent alone decides whether it stops the load (then every
    worker returns what it measured) or ends the program (then the workers are killed),
    so no worker ever prints a traceback of its own.
    """

    # From the release to the common start: time for every worker to read it.
    start_delay_s = 0.1

    def __init__(self, grace_s: float = _GRACE_S) -> None:
        self.grace_s = grace_s

    def run_shares(
        self,
        spec: LoadSpec,
        shares: Sequence[WorkerShare],
        watch: ShareWatch | None = None,
        runner: ShareRunner = run_share,
    ) -> list[WorkerOutcome]:
        unrunnable = unrunnable_main_script(spec)
        if unrunnable:
            raise WorkerFailed(unrunnable)  # before any worker dies of it
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        reports = watch is not None and watch.report is not None
        stoppable = watch is not None and watch.stop_requested is not None
        connect_s = connect_phase_bound_s(spec)
        ready = ReadyBarrier(context, len(shares), connect_s) if spec.connect_first else None
        procs: list[tuple[BaseProcess, Connection]] = []
        try:
            for share in shares:
                parent_end, child_end = context.Pipe(duplex=True)
                worker = context.Process(
                    target=_worker_main,
                    args=(spec, share, child_end, reports, stoppable, ready, runner),
                    name=f"{_WORKER_NAME}{share.index}",
                    daemon=True,
                )
                with _sigint_blocked():
                    worker.start()
                child_end.close()
                procs.append((worker, parent_end))
            released = _release_when_ready(procs)
            if watch is not None and watch.released is not None:
                watch.released(released + int(self.start_delay_s * NS_PER_S))
            limit_s = outcome_limit_s(spec, self.start_delay_s, self.grace_s)
            outcomes, failures = _collect(procs, watch, limit_s)
        except BaseException:
            for proc, _ in procs:  # the caller gave up (KeyboardInterrupt): so do they
                proc.kill()
            raise
        finally:
            for proc, pipe in procs:
                proc.join(timeout=2)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
                pipe.close()
        flows = [f for f in failures if isinstance(f, FlowError)]
        said = [f for f in failures if isinstance(f, str)]
        if _IMPORTING_MAIN in said:
            raise WorkerFailed(_unguarded_script(spec))
        unreachable = [f.removeprefix(_UNREACHABLE) for f in said if f.startswith(_UNREACHABLE)]
        if unreachable:
            raise TargetUnreachableError(unreachable[0])  # a share found nothing listening
        ran_out = [f.removeprefix(_RAN_OUT) for f in said if f.startswith(_RAN_OUT)]
        if ran_out:
            raise FeederExhausted(ran_out[0])  # a share's feeder with on_end="error" ran out
        if flows:
            raise flows[0]  # the flow raised in every session: its message and traceback
        if failures:
            raise WorkerFailed("load worker failed: " + "\n".join(map(str, failures)))
        return [outcomes[i] for i in range(len(procs))]


def outcome_limit_s(
    spec: LoadSpec, start_delay_s: float, grace_s: float = _GRACE_S
) -> float | None:
    """How long after their release the shares of a load with a duration may take to bring
    their outcomes back: start delay, connect phase, warm-up, duration, one timeout (the
    drain's last answers) and ``grace_s``. None for a load of a request count: it ends when
    its last request does, which no bound known in advance covers (each request may take up
    to the timeout, one connection after another), so its shares are lost only when their
    workers are (a process that exits, a Dask worker that leaves or falls silent)."""
    if spec.duration_s is None:
        return None
    return (
        start_delay_s
        + connect_phase_bound_s(spec)
        + spec.warmup_s
        + spec.duration_s
        + spec.timeout_s
        + grace_s
    )


def connect_phase_bound_s(spec: LoadSpec) -> float:
    """The longest a share may spend opening its connections first (0 if it does not),
    with room to spare: the phase itself ends by ``phase_limit_s``."""
    if not spec.connect_first:
        return 0.0
    return phase_limit_s(spec) + spec.connect_timeout_s + 10.0


class ReadyBarrier:
    """All the local workers' shares open their windows at one instant, once every one of
    them has its connections open (a process-shared barrier and the latest ready instant).

    A worker that never arrives (it died) breaks the barrier after ``timeout_s``; the
    others then open their windows at once, and the parent reports the dead worker.
    """

    def __init__(self, context: SpawnContext, parties: int, timeout_s: float) -> None:
        self._barrier = context.Barrier(parties)
        self._latest = context.Value("q", 0)
        self._timeout_s = timeout_s

    def wait(self, ready_ns: int) -> int:
        with self._latest.get_lock():
            self._latest.value = max(self._latest.value, ready_ns)
        try:
            self._barrier.wait(self._timeout_s)
        except threading.BrokenBarrierError:
            return monotonic_ns()
        return int(self._latest.value) + _WINDOW_MARGIN_NS


def _release_when_ready(
    procs: Sequence[tuple[BaseProcess, Connection]], limit_s: float = _READY_LIMIT_S
) -> int:
    """Wait until every worker has said it is ready, or died (its pipe ends: what it left
    is read and reported by :func:`_collect`), or ``limit_s`` passed; then release them all
    at one instant, and return it. A worker still starting then reads the release late
    and starts its share at once."""
    from multiprocessing.connection import Connection, wait

    starting = [pipe for _, pipe in procs]
    deadline = monotonic_ns() + int(limit_s * NS_PER_S)
    while starting and (left_ns := deadline - monotonic_ns()) > 0:
        for pipe in wait(starting, timeout=left_ns / NS_PER_S):
            assert isinstance(pipe, Connection)
            starting.remove(pipe)
            with contextlib.suppress(EOFError):
                pipe.recv()  # its "ready"
    released = monotonic_ns()
    for _, pipe in procs:
        with contextlib.suppress(OSError):  # a worker that died is reported by _collect
            pipe.send(("go", released))
    return released


def _collect(
    procs: Sequence[tuple[BaseProcess, Connection]],
    watch: ShareWatch | None,
    limit_s: float | None,
) -> tuple[dict[int, WorkerOutcome], list[str | FlowError]]:
    """Read every worker's messages until each has sent its outcome, exited or run out of
    time (``limit_s``; None: no limit, see :func:`outcome_limit_s`); pass snapshots on and a
    stop request down as they come."""
    from multiprocessing.connection import Connection, wait

    outcomes: dict[int, WorkerOutcome] = {}
    failures: list[str | FlowError] = []
    waiting = {pipe: (i, proc) for i, (proc, pipe) in enumerate(procs)}
    deadline = None if limit_s is None else monotonic_ns() + int(limit_s * NS_PER_S)
    poll_s = watch.stop_every_s if watch is not None else 1.0
    told_to_stop = False
    while waiting:
        remaining_s = poll_s if deadline is None else (deadline - monotonic_ns()) / NS_PER_S
        if remaining_s <= 0:
            failures += [
                f"worker {proc.name} did not finish within {limit_s:.0f}s"
                for _, proc in waiting.values()
            ]
            break
        for ready in wait(list(waiting), timeout=min(remaining_s, poll_s)):
            assert isinstance(ready, Connection)
            index, proc = waiting[ready]
            try:
                kind, payload = ready.recv()
            except EOFError:
                proc.join(timeout=2)
                kind, payload = "error", f"worker {proc.name} exited with code {proc.exitcode}"
                if proc.exitcode == _IMPORTING_MAIN_EXIT:
                    payload = _IMPORTING_MAIN  # see refuse_while_importing_main
            if kind == "progress":
                assert watch is not None and watch.report is not None
                watch.report(payload)
                continue
            if kind == "ready":
                continue  # a worker released before it was ready (_release_when_ready)
            del waiting[ready]
            if kind == "ok":
                outcomes[index] = payload
            else:
                failures.append(payload if isinstance(payload, FlowError) else str(payload))
        stop = watch.stop_requested if watch is not None else None
        if not told_to_stop and stop is not None and stop():
            told_to_stop = True
            for pipe in waiting:
                with contextlib.suppress(OSError):
                    pipe.send("stop")
    return outcomes, failures


def refuse_while_importing_main() -> None:
    """In a worker process still re-running the parent's main script (a load at the
    script's top level, not under ``if __name__ == "__main__":``), exit at once with
    :data:`_IMPORTING_MAIN_EXIT`, quietly: the parent sees that code and raises
    :func:`_unguarded_script`'s message, once, instead of every worker printing
    multiprocessing's traceback and the load failing with bare exit codes. Anywhere else
    (the parent, a worker running its share, another program's process), nothing.

    ``_inheriting`` is multiprocessing's own mark of that phase (its
    ``spawn._check_not_importing_main`` reads it); the name says whose worker it is.
    """
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:
        return  # a spawned worker has it imported before it re-runs the main script
    process = multiprocessing.current_process()
    if getattr(process, "_inheriting", False) and process.name.startswith(_WORKER_NAME):
        raise SystemExit(_IMPORTING_MAIN_EXIT)


def _unguarded_script(spec: LoadSpec) -> str:
    """What a parent whose workers re-ran its script's load says: what happened, and the
    fix."""
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) or "the main script"
    return (
        f"the load's {spec.workers} worker processes stopped as they started: each one"
        f" re-runs {script} first (workers are spawned processes), and that script starts"
        " a load at its top level, which would start the load again in every worker."
        ' Put the code that runs the load under `if __name__ == "__main__":` in'
        f" {script} (or run the load with workers=1)"
    )


def unrunnable_main_script(spec: LoadSpec) -> str | None:
    """What to say when the spawned workers could not re-run this program's main script
    (see the module doc), or None when they can.

    A spawned process re-runs ``__main__`` from its path unless it was run as a module
    (``python -m``, re-imported by name) or has no path (``python -c``, a REPL): then a
    path that is no file (``<stdin>`` for ``python -``, a script deleted since) would fail
    in every worker with ``FileNotFoundError``, as multiprocessing's
    ``spawn.get_preparation_data`` and ``_fixup_main_from_path`` would find it."""
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None
    given = getattr(main, "__file__", None)
    if not isinstance(given, str):
        return None
    path = given
    import multiprocessing.process

    original_dir = getattr(multiprocessing.process, "ORIGINAL_DIR", None)
    if not os.path.isabs(path) and original_dir is not None:
        path = os.path.join(original_dir, path)
    if os.path.isfile(path) or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None  # (multiprocessing leaves an IPython main alone)
    if given == "<stdin>":
        what = "was read from standard input (`python -`), which they cannot read again"
    else:
        what = f"is {given!r}, which is no file they can read"
    return (
        f"the load's {spec.workers} worker processes cannot start: each one re-runs this"
        " program's main script first (workers are spawned processes), and the script"
        f" {what}. Save the script to a file and run that, with the code that runs the load"
        ' under `if __name__ == "__main__":`, or run the load with workers=1'
    )


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread while a worker is spawned: the child inherits the
    blocked signal through exec, so a Ctrl-C during its start-up waits until the worker
    has set it to be ignored (and is then dropped), and the parent gets its own copy."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker_main(
    spec: LoadSpec,
    share: WorkerShare,
    pipe: Connection,
    reports: bool,
    stoppable: bool,
    ready: ReadyBarrier | None,
    runner: ShareRunner = run_share,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides (see LocalProcesses)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    with contextlib.suppress(Exception):  # it fails again in the run, which reports it
        prepare_share(spec)
    pipe.send(("ready", None))
    try:
        _, released_ns = pipe.recv()  # ("go", the release instant)
    except EOFError:
        return  # the parent is gone
    stopped = False

    def stop_requested() -> bool:
        nonlocal stopped
        if not stopped and pipe.poll():
            stopped = pipe.recv() == "stop"
        return stopped

    def report(snapshot: ShareSnapshot) -> None:
        pipe.send(("progress", snapshot))

    watch = None
    if reports or stoppable or ready is not None:
        watch = ShareWatch(
            report=report if reports else None,
            stop_requested=stop_requested if stoppable else None,
            all_ready=ready.wait if ready is not None else None,
        )
    try:
        pipe.send(("ok", runner(spec, share, released_ns, watch)))
    except TargetUnreachableError as exc:
        pipe.send(("error", f"{_UNREACHABLE}{exc}"))
    except FeederExhausted as exc:
        pipe.send(("error", f"{_RAN_OUT}{exc}"))
    except FlowError as exc:
        pipe.send(("error", exc))  # pickled with the flow's traceback (its __reduce__)
    except NetbenchError as exc:
        pipe.send(("error", str(exc)))
    except BaseException:
        pipe.send(("error", traceback.format_exc()))
    finally:
        pipe.close()


def default_transport(spec: LoadSpec) -> WorkerTransport:
    """This thread for one worker, spawned local processes for more."""
    return InThisThread() if spec.workers == 1 else LocalProcesses()


def run_workers(
    spec: LoadSpec,
    transport: WorkerTransport | None = None,
    watch: ShareWatch | None = None,
    runner: ShareRunner = run_share,
) -> list[WorkerOutcome]:
    """Run the whole load, split into ``spec.workers`` shares, on the transport (each
    share by ``runner``)."""
    refuse_while_importing_main()
    transport = transport or default_transport(spec)
    shares = split_load(spec, int(transport.start_delay_s * NS_PER_S))
    if runner is not run_share:
        return transport.run_shares(spec, shares, watch, runner)
    if watch is None:
        return transport.run_shares(spec, shares)
    return transport.run_shares(spec, shares, watch)
