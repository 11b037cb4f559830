"""The library entry points: ``http_load``, ``echo_load``, ``ws_load`` and their async
variants.

The arguments become a checked :class:`LoadSpec` (``_input.spec``) before any socket exists; the
fd budget is made; then the engine runs and the worker outcomes are merged into one
:class:`LoadResult`, with the managed server's figures when a server was given.

While it runs, ``progress`` (a callable) receives a :class:`LoadProgress` about twice a
second, and ``stop`` (a :class:`StopSignal`) can end it early: the result then holds what
was measured until then, with ``interrupted=True``. Without either the engine arms no
timer for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from time import monotonic_ns
from typing import TYPE_CHECKING, Protocol, Unpack

from pytest_netbench._engine.asyncio_io.negotiation import negotiated_spec, negotiated_spec_async
from pytest_netbench._engine.rules.connecting import unreachable_message
from pytest_netbench._engine.rules.share import split_load
from pytest_netbench._engine.rules.watch import ShareWatch
from pytest_netbench._engine.shares.driver import run_share_async
from pytest_netbench._engine.shares.workers import WorkerTransport, default_transport, run_workers
from pytest_netbench._errors import ServerError, SpecError, TargetUnreachableError
from pytest_netbench._host.kernel import tcp_ext_counter
from pytest_netbench._host.preflight import plan_load
from pytest_netbench._input.options import EchoOptions, HttpOptions, LlmOptions, WsOptions
from pytest_netbench._input.spec import echo_spec, http_spec, ws_spec
from pytest_netbench._load.attempts import run_with_retries
from pytest_netbench._load.profiled import with_profile
from pytest_netbench._model import LoadResult, LoadSpec, ServerStats
from pytest_netbench._model.live import ProgressCallback, ProgressTracker, StopSignal
from pytest_netbench._public import publish
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

# The probe's process (multiprocessing) is started, and imported, by a load that asks for
# probes only (issue 35).
if TYPE_CHECKING:
    from pytest_netbench._engine.shares.probe import ProbeProcess
    from pytest_netbench._input.grpc import SupportsSerialize
    from pytest_netbench._stats.probe import ProbeSample


class Sampler(Protocol):
    def start(self) -> None: ...

    def stop(self, completed_requests: int) -> ServerStats: ...


class Monitored(Protocol):
    """What ``server=`` needs: a way to sample its process tree, and a liveness check."""

    def monitor(self) -> Sampler: ...

    def check_alive(self) -> None: ...


def run_spec(
    spec: LoadSpec,
    server: Monitored | None = None,
    *,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
) -> LoadResult:
    """Run a checked spec in this thread (and worker processes, or on a Dask ``cluster``)
    and merge the result; ``protocol="auto"`` is first asked of the server (one TLS
    connection) and the load runs as the protocol it chose."""
    load = _Surroundings(negotiated_spec(spec), server, progress, stop, cluster)
    try:
        outcomes = run_workers(load.spec, load.transport, load.live.watch)
    finally:
        load.stop_probe()
    return load.finish(outcomes)


async def run_spec_async(
    spec: LoadSpec,
    server: Monitored | None = None,
    *,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
) -> LoadResult:
    """As :func:`run_spec`, on the caller's running loop (more workers run in processes)."""
    load = _Surroundings(await negotiated_spec_async(spec), server, progress, stop, None)
    try:
        outcomes = await _run_async(load.spec, load.transport, load.live)
    finally:
        load.stop_probe()
    return load.finish(outcomes)


class _Surroundings:
    """What surrounds a load's shares: the pre-flight, the managed server's (and its
    backend's) samplers, the host's counters and the client-delay probe; started on
    construction, folded into the result by :meth:`finish`."""

    def __init__(
        self,
        spec: LoadSpec,
        server: Monitored | None,
        progress: ProgressCallback | None,
        stop: StopSignal | None,
        cluster: object | None,
    ) -> None:
        self.notes: tuple[str, ...] = ()  # the shares' machines are the cluster's
        if cluster is None:
            spec, self.notes = plan_load(spec, _server_pid(server))
            self.transport = default_transport(spec)
        else:
            self.transport = cluster_transport(cluster)
        self.spec = spec
        self.server = server
        self.live = _Live(spec, self.transport.start_delay_s, progress, stop)
        self.sampler = _start_sampler(server)
        self.backend_sampler = _start_sampler(_backend_of(server))
        self.overflows = tcp_ext_counter("ListenOverflows")
        self.probe = _start_probe(spec)
        self.samples: list[ProbeSample] = []

    def stop_probe(self) -> None:
        if self.probe is not None:
            self.samples = self.probe.stop()

    def finish(self, outcomes: list[WorkerOutcome]) -> LoadResult:
        spec = self.spec
        result = _finish(spec, outcomes, self.sampler, self.server, self.backend_sampler)
        result = _with_probe(result, spec, outcomes, self.samples)
        return self.live.finish(_with_host_figures(result, self.notes, self.overflows))


async def _run_async(
    spec: LoadSpec, transport: WorkerTransport, live: _Live
) -> list[WorkerOutcome]:
    if spec.workers == 1:
        loop_name = type(asyncio.get_running_loop()).__module__.split(".")[0]
        share = split_load(spec)[0]
        outcomes = [await run_share_async(spec, share, loop_name, monotonic_ns(), live.watch)]
    else:
        outcomes = await asyncio.get_running_loop().run_in_executor(
            None, run_workers, spec, transport, live.watch
        )
    return outcomes


def _start_probe(spec: LoadSpec) -> ProbeProcess | None:
    if spec.probe_every_s is None:
        return None
    from pytest_netbench._engine.shares.probe import ProbeProcess

    probe = ProbeProcess(spec, spec.probe_every_s)
    probe.start()
    return probe


def _with_probe(
    result: LoadResult,
    spec: LoadSpec,
    outcomes: list[WorkerOutcome],
    samples: list[ProbeSample],
) -> LoadResult:
    """The probes that started inside the measured window, as the result's ``probe``."""
    if spec.probe_every_s is None or not outcomes:
        return result
    from pytest_netbench._stats.probe import summarize_probe

    start = min(o.window_start_ns for o in outcomes)
    end = max(o.window_end_ns for o in outcomes)
    stats = summarize_probe(samples, spec.probe_every_s, start, end)
    return dataclasses.replace(result, probe=stats)


def cluster_transport(cluster: object) -> WorkerTransport:
    """The shares' transport on a Dask cluster; a clear error without the extra."""
    try:
        from pytest_netbench._engine.shares.dask_transport import DaskWorkers
    except ImportError as exc:
        raise SpecError(
            f"cluster= needs Dask's distributed scheduler ({exc}): pip install"
            " 'pytest-netbench[distributed]'"
        ) from None
    return DaskWorkers(cluster)  # type: ignore[arg-type]


def _backend_of(server: Monitored | None) -> Monitored | None:
    """A managed proxy's backend server, when it is one (its figures go beside the proxy's)."""
    backend = getattr(server, "backend", None)
    return backend if backend is not None and hasattr(backend, "monitor") else None


def _server_pid(server: Monitored | None) -> int | None:
    pid = getattr(server, "pid", None)
    return pid if isinstance(pid, int) else None


def _with_host_figures(
    result: LoadResult, notes: tuple[str, ...], overflows_before: int | None
) -> LoadResult:
    """The pre-flight's notes and the host's SYN-queue overflows during the load."""
    after = tcp_ext_counter("ListenOverflows")
    overflows = None
    if after is not None and overflows_before is not None:
        overflows = after - overflows_before
    generator = dataclasses.replace(result.generator, notes=notes, listen_overflows=overflows)
    return dataclasses.replace(result, generator=generator)


class _Live:
    """One load's progress reports and stop request, wired to its shares' watch."""

    def __init__(
        self,
        spec: LoadSpec,
        start_delay_s: float,
        progress: ProgressCallback | None,
        stop: StopSignal | None,
    ) -> None:
        self.stop = stop
        self.tracker: ProgressTracker | None = None
        self.watch: ShareWatch | None = None
        if progress is not None:
            self.tracker = ProgressTracker(
                progress,
                start_ns=monotonic_ns() + int(start_delay_s * 1e9),
                warmup_s=spec.warmup_s,
                duration_s=spec.duration_s,
                requests=spec.requests,
            )
        if progress is not None or stop is not None:
            self.watch = ShareWatch(
                report=self.tracker.update if self.tracker is not None else None,
                stop_requested=self._stop_requested,
                released=self.tracker.starts_at if self.tracker is not None else None,
            )

    def _stop_requested(self) -> bool:
        # A progress callback that raised stops the load too: its error is raised at once.
        failed = self.tracker is not None and self.tracker.failure is not None
        return failed or (self.stop is not None and self.stop.requested)

    def finish(self, result: LoadResult) -> LoadResult:
        if self.tracker is not None and self.tracker.failure is not None:
            raise self.tracker.failure
        if self.stop is not None and self.stop.requested:
            return dataclasses.replace(result, interrupted=True)
        return result


def _start_sampler(server: Monitored | None) -> Sampler | None:
    if server is None:
        return None
    server.check_alive()
    sampler = server.monitor()
    sampler.start()
    return sampler


def _finish(
    spec: LoadSpec,
    outcomes: list[WorkerOutcome],
    sampler: Sampler | None,
    server: Monitored | None,
    backend_sampler: Sampler | None = None,
) -> LoadResult:
    ok = sum(sum(o.latency_counts.values()) for o in outcomes)
    stats = sampler.stop(ok) if sampler is not None else None
    result = merge_outcomes(spec, outcomes, stats)
    if backend_sampler is not None:
        result = dataclasses.replace(result, backend=backend_sampler.stop(ok))
    for role, watched in (("server", server), ("backend", _backend_of(server))):
        if watched is None:
            continue
        try:
            watched.check_alive()
        except ServerError as exc:
            # The figures stay (they are what the clients saw), but they describe a crash.
            reason = f"server died during the load: {exc}"
            if role == "backend":
                reason = f"server died during the load: the proxy's backend: {exc}"
            result = dataclasses.replace(
                result,
                valid=False,
                invalid_reasons=(*result.invalid_reasons, reason),
                invalid_causes=(*result.invalid_causes, "server_died"),
            )
    connect_errors = result.errors.get("connect", 0)
    if connect_errors and result.ok == 0 and result.errors_total == connect_errors and not server:
        # Nothing ever got through (connects still pending at a deadline are in flight).
        sample = result.error_samples.get("connect", "")
        raise TargetUnreachableError(unreachable_message(spec, connect_errors, sample))
    return result


def http_load(
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
    retries: int = 0,
    profile: bool = False,
    **options: Unpack[HttpOptions],
) -> LoadResult:
    """Drive HTTP load at ``url`` and return what was measured (the options:
    :data:`~pytest_netbench._input.options.LOAD_OPTIONS`, docs/api.md).

    ``profile``: then run the load once more with the ``server``'s process tree sampled
    (py-spy or perf) and return the measured result with that profile
    (``result.profile``, docs/profiles.md).

    ``progress``: called with a :class:`LoadProgress` about twice a second while the load
    runs (in the thread running it: keep it short); ``stop``: a :class:`StopSignal` that
    ends the load early, its result marked ``interrupted``; ``cluster``: a Dask scheduler
    address (``tcp://host:8786``) or ``distributed.Client`` whose workers run the
    ``workers`` shares (one each; the ``distributed`` extra, docs/distributed.md);
    ``retries``: run the load again, up to this many times, while only the generator made
    it invalid (its CPU, schedule or fds), and return the last run."""
    spec = http_spec(url, **options)
    result = _run_with_retries(spec, server, progress, stop, cluster, retries)
    if not profile:
        return result

    def again(spec: LoadSpec) -> LoadResult:
        return run_spec(spec, server, progress=progress, stop=stop, cluster=cluster)

    return with_profile(spec, server, result, again)


def sse_load(
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
    retries: int = 0,
    **options: Unpack[HttpOptions],
) -> LoadResult:
    """Open streams of server-sent events at ``url`` and read each as it arrives:
    :func:`http_load` with ``stream="sse"`` (or ``"chunks"`` for a body that is not SSE).
    ``connections`` streams at once (closed loop), or new ones at ``rate`` a second (open
    loop: first event and whole stream from when each was due); ``stream_events`` and
    ``stream_end`` (``"[DONE]"``) check each stream. The figures are ``result.stream``
    (first byte, first event, gap, events, events per second); the latency is the whole
    stream's."""
    options.setdefault("stream", "sse")
    spec = http_spec(url, **options)
    return _run_with_retries(spec, server, progress, stop, cluster, retries)


def llm_load(
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
    retries: int = 0,
    **options: Unpack[LlmOptions],
) -> LoadResult:
    """Streams of tokens from an OpenAI-compatible server at ``url`` (its
    ``/v1/completions`` or ``/v1/chat/completions``), as vLLM's ``vllm bench serve`` sends
    them: :func:`sse_load` with ``stream="openai"``, each request a ``POST`` of ``model``,
    the next of ``prompts`` (a JSON-lines file's path, or a list: a string, or an object
    with ``prompt`` or ``messages`` and its own ``max_tokens`` if it likes; cycled) and
    ``max_tokens``, with ``"stream": true`` and usage asked for (``api``: ``"chat"`` or
    ``"completions"``, else from the URL's path; ``extra``: fields every body carries,
    such as ``{"temperature": 0}``). The figures are
    ``result.stream`` (TTFT, ITL, TPOT, output tokens; ``goodput=`` for goodput). The other
    options as for :func:`http_load` (``connections``, ``rate``, ``duration``, ``headers``
    such as an ``Authorization``...)."""
    if cluster is not None:
        raise SpecError("an LLM load's requests are a file on this machine: cluster= is not yet")
    with llm_spec(url, **options) as spec:
        return _run_with_retries(spec, server, progress, stop, None, retries)


@contextlib.contextmanager
def llm_spec(url: str, **options: Unpack[LlmOptions]) -> Iterator[LoadSpec]:
    """The checked :class:`LoadSpec` of :func:`llm_load`, valid inside the ``with``: its
    request bodies are a JSON-lines file that lives as long (its feeder reads it)."""
    import json
    import tempfile
    from pathlib import Path

    from pytest_netbench._input.llm import SET_BY_LLM_LOAD, api_is_chat, llm_bodies
    from pytest_netbench._input.options import split_llm_options
    from pytest_netbench._model import feeders

    own, http_options = split_llm_options(options)
    for name, why in SET_BY_LLM_LOAD.items():
        if name in http_options:
            raise SpecError(f"an LLM load takes no {name}=: {why}")
    chat = api_is_chat(own["api"], url.split("://", 1)[-1])
    bodies = llm_bodies(
        own["model"], own["prompts"], own["max_tokens"], chat=chat, extra=own["extra"]
    )
    given = http_options.pop("headers", None) or ()
    pairs = list(given.items() if isinstance(given, Mapping) else given)
    if not any(str(name).lower() == "content-type" for name, _ in pairs):
        pairs.append(("Content-Type", "application/json"))
    with tempfile.TemporaryDirectory(prefix="netbench-llm-") as folder:
        requests = Path(folder) / "requests.jsonl"
        requests.write_text("".join(json.dumps(body) + "\n" for body in bodies))
        http_options["headers"] = pairs
        http_options["method"] = "POST"
        http_options["body"] = "${request}"
        http_options["stream"] = "openai"
        http_options["feeders"] = {"request": feeders.jsonl(requests)}
        yield http_spec(url, **http_options)


def grpc_load(
    url: str,
    method: str,
    /,
    message: bytes | SupportsSerialize = b"",
    *,
    deadline: float | None = None,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
    retries: int = 0,
    **options: Unpack[HttpOptions],
) -> LoadResult:
    """Make gRPC unary calls to ``method`` (``/package.Service/Method``) over HTTP/2, each
    sending ``message`` (serialized bytes), and return what was measured: a stream is a
    call, ok only with grpc-status 0; ``status_codes`` counts grpc-status codes (0 for ok
    calls; an answer that is not HTTP 200 under its HTTP status); a call that ends with
    another grpc-status is a ``status`` error, ``deadline`` (seconds, sent as
    ``grpc-timeout``) one the server ends as DEADLINE_EXCEEDED (4). The other options, and
    ``server``, ``progress``, ``stop``, ``cluster``, ``retries``, as for :func:`http_load`
    (``streams``: calls in flight per connection). ``stream="grpc"`` calls a
    server-streaming method and times each call's messages as they arrive
    (``result.stream``: first event, gaps, events a call; ``stream_events`` checks the
    count)."""
    from pytest_netbench._input.grpc import grpc_spec  # gRPC's protobuf and framing

    spec = grpc_spec(url, method, message, deadline=deadline, **options)
    return _run_with_retries(spec, server, progress, stop, cluster, retries)


def echo_load(
    host: str,
    port: int,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
    retries: int = 0,
    **options: Unpack[EchoOptions],
) -> LoadResult:
    """Send payloads over raw TCP and read them back verified (the options:
    :data:`~pytest_netbench._input.options.LOAD_OPTIONS`; ``progress``, ``stop``, ``cluster``
    and ``retries`` as for :func:`http_load`)."""
    spec = echo_spec(host, port, **options)
    return _run_with_retries(spec, server, progress, stop, cluster, retries)


def ws_load(
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    cluster: object | None = None,
    retries: int = 0,
    **options: Unpack[WsOptions],
) -> LoadResult:
    """Open WebSocket connections to ``url`` (``ws://``) and exchange messages, each sent
    and its echo awaited (the options: :data:`~pytest_netbench._input.options.LOAD_OPTIONS`;
    ``progress``, ``stop``, ``cluster`` and ``retries`` as for :func:`http_load`). The
    result counts messages: ``sent``, ``ok``, ``errors`` and the latencies are per message
    round trip (docs/websocket.md)."""
    spec = ws_spec(url, **options)
    return _run_with_retries(spec, server, progress, stop, cluster, retries)


def _run_with_retries(
    spec: LoadSpec,
    server: Monitored | None,
    progress: ProgressCallback | None,
    stop: StopSignal | None,
    cluster: object | None,
    retries: int,
) -> LoadResult:
    def run(spec: LoadSpec) -> LoadResult:
        return run_spec(spec, server, progress=progress, stop=stop, cluster=cluster)

    return run_with_retries(spec, run, retries).kept


async def http_load_async(
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    **options: Unpack[HttpOptions],
) -> LoadResult:
    """As :func:`http_load`, on the caller's running loop (more workers run in processes)."""
    return await run_spec_async(http_spec(url, **options), server, progress=progress, stop=stop)


async def echo_load_async(
    host: str,
    port: int,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    **options: Unpack[EchoOptions],
) -> LoadResult:
    """As :func:`echo_load`, on the caller's running loop (more workers run in processes)."""
    spec = echo_spec(host, port, **options)
    return await run_spec_async(spec, server, progress=progress, stop=stop)


async def ws_load_async(
    url: str,
    *,
    server: Monitored | None = None,
    progress: ProgressCallback | None = None,
    stop: StopSignal | None = None,
    **options: Unpack[WsOptions],
) -> LoadResult:
    """As :func:`ws_load`, on the caller's running loop (more workers run in processes)."""
    return await run_spec_async(ws_spec(url, **options), server, progress=progress, stop=stop)


publish(globals())
