"""``flow(shopper, url, users=50, duration=30)``: virtual users running a user flow.

The arguments are checked (the load's through ``http_spec``: URL, loopback guard, times,
loop) before any socket exists; the share runs on a fresh loop in this thread
(:func:`flow`) or on the caller's (:func:`flow_async`), and its outcomes become one
:class:`LoadResult` whose ``by_request`` holds each step and ``sessions`` the sessions.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import functools
from collections.abc import Mapping, Sequence
from time import monotonic_ns
from typing import Any, TypedDict, Unpack

from pytest_netbench._engine.rules.connecting import unreachable_message
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._engine.shares.workers import WorkerTransport, default_transport, run_workers
from pytest_netbench._errors import SpecError, TargetUnreachableError
from pytest_netbench._flow.arrivals import OpenFlowRun
from pytest_netbench._flow.choice import FlowChoice, Flows, flow_choice
from pytest_netbench._flow.outcome import SessionOutcome, merge_flow
from pytest_netbench._flow.run import CLIENTS, FlowRun
from pytest_netbench._flow.share import (
    FlowJob,
    FlowWorkerOutcome,
    reference_of,
    run_flow_on_loop,
)
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.api import Monitored, Sampler, _Live, _start_sampler, cluster_transport
from pytest_netbench._model import LoadResult, LoadSpec
from pytest_netbench._model.live import ProgressCallback, StopSignal
from pytest_netbench._public import publish
from pytest_netbench._stats.recorder import WorkerOutcome


class FlowLoadOptions(TypedDict, total=False):
    """The load a flow makes, as :func:`flow_async` takes it (the loop is the caller's);
    each option's default and check: :func:`flow_spec`."""

    users: int
    duration: float | None
    sessions: int | None
    rate: float | None
    arrival: str
    stages: Sequence[Any] | None
    max_users: int | None
    workers: int
    warmup: float
    timeout: float | None
    connect_timeout: float | None
    seed: int
    allow_remote: bool
    cpus: str | Sequence[int] | None


class FlowOptions(FlowLoadOptions, total=False):
    """The load a flow makes, as :func:`flow` takes it: with the loop it runs on."""

    loop: str


def flow(
    flow_function: Flows,
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    client: str = "httpx",
    cluster: object | None = None,
    **options: Unpack[FlowOptions],
) -> LoadResult:
    """Run ``users`` virtual users, each calling ``await flow_function(client)`` in a loop
    (one call is a session) with an ``httpx.AsyncClient`` (``client="lean"``: the lean
    client, the same verbs at a fraction of httpx's cost) whose requests go to ``url``
    through the engine, for ``duration`` seconds or until ``sessions`` sessions have run
    (neither: the load's default duration). Each request is a step of the result's
    ``by_request`` (named by ``extensions={"netbench_step": NAME}``, else ``"METHOD
    /path"``); ``result.sessions`` counts the sessions. Several flows by weight:
    ``{browse: 3, buy: 1}`` (each session draws one). ``rate``: the open model, sessions
    started at ``rate`` a second (``arrival`` uniform or poisson; ``stages`` move the rate
    over time, as a load's do; without ``rate`` they move the number of users) by whichever
    user is
    free, up to ``max_users`` of them (default: ``users``, at least 1,024). ``workers``:
    the users (and sessions, and rate) split over that many worker processes, each
    importing the flows by reference (top-level functions of a module); with ``cluster``
    (a Dask scheduler address or client) the shares run on its workers instead. ``server``: a
    managed server whose process tree is sampled during the load; ``progress`` and
    ``stop``: as for ``http_load`` (a :class:`LoadProgress` twice a second; a
    :class:`StopSignal` that ends it early, ``interrupted``). ``client="httpx"`` needs the
    ``flows`` extra (httpx).
    """
    check_flow_options(options)
    spec, sessions = flow_spec(url, **options)
    return run_flow_spec(
        flow_function,
        spec,
        sessions,
        server=server,
        progress=progress,
        stop=stop,
        client=client,
        cluster=cluster,
    )


def scale_sessions(sessions: int | None, users: int, scale: float) -> int | None:
    """A flow's budget of sessions ``scale`` times as large (``--netbench-scale``), never
    fewer than its users: each runs one at least."""
    if sessions is None or scale == 1.0:
        return sessions
    return max(users, round(sessions * scale))


def run_flow_spec(
    flow_function: Flows,
    spec: LoadSpec,
    sessions: int | None = None,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    client: str = "httpx",
    cluster: object | None = None,
) -> LoadResult:
    """Run a flow on a checked spec (:func:`flow_spec`) on a fresh loop in this thread."""
    choice = flow_choice(flow_function)
    check_client(client)
    share = split_load(spec)[0]
    transport = _shares_transport(spec, cluster)
    if transport is not None:
        return _in_shares(choice, spec, sessions, transport, server, progress, stop, client)
    sampler = _start_sampler(server)
    live = _Live(spec, 0.0, progress, stop)
    outcomes = run_flow_on_loop(choice, spec, share, monotonic_ns(), sessions, live.watch, client)
    return live.finish(_result(spec, choice, [outcomes], sampler))


def _shares_transport(spec: LoadSpec, cluster: object | None) -> WorkerTransport | None:
    """Where the shares run when not in this thread: worker processes, or the cluster's."""
    if spec.workers == 1 and cluster is None:
        return None
    return default_transport(spec) if cluster is None else cluster_transport(cluster)


def _in_shares(
    choice: FlowChoice,
    spec: LoadSpec,
    sessions: int | None,
    transport: WorkerTransport,
    server: Monitored | None,
    progress: ProgressCallback | None,
    stop: StopSignal | None,
    client: str,
) -> LoadResult:
    """A share per worker process (or Dask worker), each importing the flows by
    reference; a share whose worker was lost brings back no sessions."""
    references = tuple(
        (reference_of(f), w) for f, w in zip(choice.flows, choice.weights, strict=True)
    )
    runner = FlowJob(references, sessions, client)
    sampler = _start_sampler(server)
    live = _Live(spec, transport.start_delay_s, progress, stop)
    outcomes = run_workers(spec, transport, live.watch, runner)
    shares = [
        (o, o.sessions if isinstance(o, FlowWorkerOutcome) else SessionOutcome()) for o in outcomes
    ]
    return live.finish(_result(spec, choice, shares, sampler))


async def flow_async(
    flow_function: Flows,
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    client: str = "httpx",
    cluster: object | None = None,
    **options: Unpack[FlowLoadOptions],
) -> LoadResult:
    """As :func:`flow`, on the caller's running asyncio loop; with ``workers`` > 1 or a
    ``cluster`` the shares run in worker processes (or on the cluster) while this loop
    waits for them in an executor thread, free to run other tasks."""
    loop = asyncio.get_running_loop()
    loop_name = type(loop).__module__.split(".")[0]
    # The caller's loop runs this share, so no loop is taken (one given is a TypeError).
    check_flow_options(options, FlowLoadOptions)
    spec, sessions = flow_spec(url, loop="auto", **options)
    choice = flow_choice(flow_function)
    check_client(client)
    transport = _shares_transport(spec, cluster)
    if transport is not None:
        shares = functools.partial(
            _in_shares, choice, spec, sessions, transport, server, progress, stop, client
        )
        return await loop.run_in_executor(None, shares)
    share = split_load(spec)[0]
    sampler = _start_sampler(server)
    live = _Live(spec, 0.0, progress, stop)
    run = _run_class(spec)(choice, spec, share, monotonic_ns(), sessions, live.watch, client)
    return live.finish(_result(spec, choice, [await run.run(loop_name)], sampler))


def flow_spec(
    url: str,
    *,
    users: int = 10,
    duration: float | None = None,
    sessions: int | None = None,
    rate: float | None = None,
    arrival: str = "uniform",
    stages: Sequence[Any] | None = None,
    max_users: int | None = None,
    workers: int = 1,
    warmup: float = 0.0,
    timeout: float | None = None,
    connect_timeout: float | None = None,
    loop: str = "auto",
    seed: int = 0,
    allow_remote: bool = False,
    cpus: str | Sequence[int] | None = None,
) -> tuple[LoadSpec, int | None]:
    """The checked spec of a flow load (a user is a connection), and its session count."""
    if isinstance(users, bool) or not isinstance(users, int) or users < 1:
        raise SpecError(f"users must be a whole number of at least 1, got {users!r}")
    if sessions is not None and (
        isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 1
    ):
        raise SpecError(f"sessions must be a whole number of at least 1, got {sessions!r}")
    options: dict[str, Any] = {
        "connections": users,
        "workers": workers,
        "warmup": warmup,
        "loop": loop,
        "seed": seed,
        "allow_remote": allow_remote,
        "cpus": cpus,  # the cores the users' loop runs on, as any load's
    }
    if rate is not None:
        options["rate"] = rate
        options["arrival"] = arrival
    if stages is not None:
        options["stages"] = stages
    if max_users is not None:
        options["max_connections"] = max_users
    if duration is not None:
        options["duration"] = duration
    if timeout is not None:
        options["timeout"] = timeout
    if connect_timeout is not None:
        options["connect_timeout"] = connect_timeout
    spec = http_spec(url, **options)
    if sessions is not None and duration is None:
        spec = dataclasses.replace(spec, duration_s=None)  # ends when the sessions have run
    return spec, sessions


# A load's option a flow names otherwise: what to write instead.
_FLOW_WORDS = {
    "connections": "users",
    "requests": "sessions",
    "max_connections": "max_users",
    "vus": "users",
    "iterations": "sessions",
}


def check_flow_options(given: Mapping[str, Any], options: type = FlowOptions) -> None:
    """Every keyword is an option of a flow; a misspelt one is a :class:`SpecError` naming
    the closest (``user`` -> ``users``), as a load's options are checked, not Python's
    TypeError from deep inside."""
    known = sorted(options.__optional_keys__ | options.__required_keys__)  # type: ignore[attr-defined]
    for name in given:
        if name in known:
            continue
        if name == "loop" and options is FlowLoadOptions:
            raise SpecError("flow_async runs on the caller's loop: drop loop=")
        hint = _FLOW_WORDS.get(name) or next(
            iter(difflib.get_close_matches(name, [*known, "client", "server"], n=1, cutoff=0.6)),
            None,
        )
        advice = f"did you mean {hint!r}?" if hint else f"a flow takes {', '.join(known)}"
        raise SpecError(f"unknown option {name!r} for a flow: {advice}")


def _run_class(spec: LoadSpec) -> type[FlowRun]:
    """The closed model's run, or the open model's when sessions start at a rate."""
    return FlowRun if spec.rate is None else OpenFlowRun


def check_client(client: str) -> None:
    """``"httpx"`` (installed) or ``"lean"``; anything else said before any socket."""
    if client not in CLIENTS:
        raise SpecError(f"client must be one of {', '.join(CLIENTS)}, got {client!r}")
    if client == "httpx":
        try:
            import httpx  # noqa: F401
        except ImportError:
            raise SpecError(
                "a flow with client='httpx' needs httpx: pip install 'pytest-netbench[flows]',"
                " or run it with client='lean'"
            ) from None


def _result(
    spec: LoadSpec,
    choice: FlowChoice,
    shares: Sequence[tuple[WorkerOutcome, SessionOutcome]],
    sampler: Sampler | None,
) -> LoadResult:
    ok = sum(sum(worker.latency_counts.values()) for worker, _ in shares)
    result = merge_flow(spec, shares, sampler.stop(ok) if sampler is not None else None)
    if result.sessions is not None:  # which flows ran, by weight, for the reports
        sessions = dataclasses.replace(result.sessions, flows=choice.described)
        result = dataclasses.replace(result, sessions=sessions)
    connect_errors = result.errors.get("connect", 0)
    if connect_errors and result.ok == 0 and result.errors_total == connect_errors:
        sample = result.error_samples.get("connect", "")
        raise TargetUnreachableError(unreachable_message(spec, connect_errors, sample))
    return result


publish(globals())
