"""A flow load's share where it runs, in a worker process (``workers=N``) or, by the same
seam, on a Dask worker: the flows are shipped by reference (``module:function``) and
imported there, and the share's sessions come back inside its outcome.

A :class:`FlowJob` is the share runner: called, it has the shape of the engine's
``run_share``, so any ``WorkerTransport`` runs it (it pickles); its ``check_here`` imports
the flows where a share will run, so a transport can refuse a worker that cannot before
any load starts.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys
from dataclasses import dataclass, field

from pytest_netbench._engine.rules.share import WorkerShare
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.shares.driver import resolve_loop, run_on_loop
from pytest_netbench._errors import SpecError
from pytest_netbench._flow.arrivals import OpenFlowRun
from pytest_netbench._flow.choice import FlowChoice, FlowFunction, flow_choice
from pytest_netbench._flow.outcome import SessionOutcome
from pytest_netbench._flow.reference import load_flow
from pytest_netbench._flow.run import FlowRun
from pytest_netbench._host.cpus import pinned_thread
from pytest_netbench._model import LoadSpec
from pytest_netbench._stats.recorder import WorkerOutcome

_SHIP = (
    "every worker imports the flows by reference, so their module must be importable"
    " there: install it on every worker, put its directory on the workers' PYTHONPATH, or"
    " send it with the Dask client's upload_file('path/to/module.py')"
)


@dataclass(frozen=True, slots=True)
class FlowJob:
    """What every share of a flow load runs: the flows by reference with their weights,
    the load's sessions in all (None: by time), and the client."""

    flows: tuple[tuple[str, int], ...]
    sessions: int | None
    client: str

    def sessions_of(self, share: WorkerShare) -> int | None:
        """The share's part of the sessions, split as evenly as they go."""
        if self.sessions is None:
            return None
        n = share.workers
        return self.sessions // n + (1 if share.index < self.sessions % n else 0)

    def __call__(
        self, spec: LoadSpec, share: WorkerShare, released_ns: int, watch: ShareWatch | None
    ) -> WorkerOutcome:
        return run_flow_share(self, spec, share, released_ns, watch)

    def check_here(self) -> None:
        """Import every flow in this process, as a share will: a :class:`SpecError` naming
        the module that cannot be imported (or lacks the flow) and what to do."""
        for reference, _ in self.flows:
            module_name, _, name = reference.rpartition(":")
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:
                raise SpecError(
                    f"cannot import the flow's module {module_name!r}"
                    f" ({type(exc).__name__}: {exc}): {_SHIP}"
                ) from None
            if not inspect.iscoroutinefunction(getattr(module, name, None)):
                raise SpecError(
                    f"the flow's module {module_name!r} here has no async function {name!r}"
                    f" (another version of it?): {_SHIP}"
                )


@dataclass(slots=True)
class FlowWorkerOutcome(WorkerOutcome):
    """A share's requests (the engine's outcome) and its sessions."""

    sessions: SessionOutcome = field(default_factory=SessionOutcome)


def reference_of(function: FlowFunction) -> str:
    """``module:function`` of a flow a worker process can import; a :class:`SpecError`
    for one it cannot (defined inside a function, or a method)."""
    module = getattr(function, "__module__", None)
    name = getattr(function, "__qualname__", "")
    if not module or not name or "." in name:
        raise SpecError(
            f"with workers= a flow is imported by each worker, so it must be a function at"
            f" the top of a module, got {function!r}: move it out of the function or class"
            " that defines it"
        )
    if module == "__main__" and not getattr(sys.modules.get("__main__"), "__file__", None):
        raise SpecError(
            f"with workers= a flow is imported by each worker, and {name} was defined in an"
            " interactive session (or python -c), which no worker can import: put it in a"
            " module (shop_flows.py) and import it from there"
        )
    return f"{module}:{name}"


def run_flow_share(
    job: FlowJob, spec: LoadSpec, share: WorkerShare, released_ns: int, watch: ShareWatch | None
) -> WorkerOutcome:
    """Run one share of a flow load on a fresh loop of the spec's kind, in this thread."""
    choice = _imported(job)
    start = share.start_at(released_ns)
    worker, sessions = run_flow_on_loop(
        choice, spec, share, start, job.sessions_of(share), watch, job.client
    )
    values = {f.name: getattr(worker, f.name) for f in dataclasses.fields(WorkerOutcome)}
    return FlowWorkerOutcome(**values, sessions=sessions)


def run_flow_on_loop(
    choice: FlowChoice,
    spec: LoadSpec,
    share: WorkerShare,
    start_at_ns: int,
    sessions: int | None,
    watch: ShareWatch | None,
    client: str,
) -> tuple[WorkerOutcome, SessionOutcome]:
    """One share of a flow to its end on a fresh loop of the spec's kind (on its
    ``cpus``): uvloop or asyncio, or trio."""
    loop_name = resolve_loop(spec.loop)
    with pinned_thread(spec.cpus):
        if loop_name == "trio":
            import trio

            from pytest_netbench._flow.trio_run import TrioFlowRun, TrioOpenFlowRun

            trio_class = TrioFlowRun if spec.rate is None else TrioOpenFlowRun
            on_trio = trio_class(choice, spec, share, start_at_ns, sessions, watch, client)
            return trio.run(on_trio.run, loop_name)
        run_class = FlowRun if spec.rate is None else OpenFlowRun
        run = run_class(choice, spec, share, start_at_ns, sessions, watch, client)
        return run_on_loop(loop_name, lambda: run.run(loop_name))


def _imported(job: FlowJob) -> FlowChoice:
    return flow_choice({load_flow(reference): weight for reference, weight in job.flows})
