"""Several worker processes, each with its own loop, started together and merged after.

Workers are spawned (not forked) so a parent that runs threads or an event loop of its own
(pytest with plugins, an async application) hands nothing half-locked to its children.
"""

from __future__ import annotations

import multiprocessing
import traceback
from multiprocessing.connection import Connection
from time import monotonic_ns

from pytest_netbench._engine.driver import run_share
from pytest_netbench._engine.share import WorkerShare, split_load
from pytest_netbench._errors import NetbenchError
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import WorkerOutcome

_NS = 1_000_000_000
# Spawned interpreters need time to import before the common start instant.
_SPAWN_LEAD_S = 1.5
_GRACE_S = 30.0


class WorkerFailed(NetbenchError):
    """A load worker process died or raised."""


def _worker_main(spec: LoadSpec, share: WorkerShare, pipe: Connection) -> None:
    try:
        pipe.send(("ok", run_share(spec, share)))
    except NetbenchError as exc:
        pipe.send(("error", str(exc)))
    except BaseException:
        pipe.send(("error", traceback.format_exc()))
    finally:
        pipe.close()


def run_workers(spec: LoadSpec) -> list[WorkerOutcome]:
    """Run the whole load; one worker runs in this process, more run in spawned ones."""
    if spec.workers == 1:
        return [run_share(spec, split_load(spec, monotonic_ns())[0])]
    start_at = monotonic_ns() + int(_SPAWN_LEAD_S * _NS)
    context = multiprocessing.get_context("spawn")
    procs = []
    for share in split_load(spec, start_at):
        parent_end, child_end = context.Pipe(duplex=False)
        proc = context.Process(
            target=_worker_main,
            args=(spec, share, child_end),
            name=f"netbench-worker-{share.index}",
            daemon=True,
        )
        proc.start()
        child_end.close()
        procs.append((proc, parent_end))
    limit_s = _SPAWN_LEAD_S + spec.warmup_s + (spec.duration_s or 0) + spec.timeout_s + _GRACE_S
    outcomes: list[WorkerOutcome] = []
    failures: list[str] = []
    deadline = monotonic_ns() + int(limit_s * _NS)
    for proc, pipe in procs:
        remaining = max(deadline - monotonic_ns(), 0) / _NS
        if pipe.poll(remaining):
            try:
                status, payload = pipe.recv()
            except EOFError:
                status, payload = "error", f"worker {proc.name} exited with code {proc.exitcode}"
        else:
            status, payload = "error", f"worker {proc.name} did not finish within {limit_s:.0f}s"
        if status == "ok":
            outcomes.append(payload)
        else:
            failures.append(str(payload))
    for proc, pipe in procs:
        proc.join(timeout=2)
        if proc.is_alive():
            proc.kill()
            proc.join()
        pipe.close()
    if failures:
        raise WorkerFailed("load worker failed: " + "\n".join(failures))
    return outcomes
