"""The library entry points: ``http_load``, ``echo_load`` and their async variants.

Everything the user can get wrong is checked here, before any socket exists: the target
(loopback unless allowed), the numbers, the fd budget. Then the engine runs and the worker
outcomes are merged into one :class:`LoadResult`, with the managed server's figures when a
server was given.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from time import monotonic_ns
from typing import Any, Protocol

from pytest_netbench._engine.driver import resolve_loop, run_share_async
from pytest_netbench._engine.exchange import build_exchange
from pytest_netbench._engine.share import split_load
from pytest_netbench._engine.target import (
    ensure_fd_budget,
    guard_target,
    parse_http_url,
)
from pytest_netbench._engine.workers import run_workers
from pytest_netbench._errors import ServerError, SpecError, TargetUnreachableError
from pytest_netbench._model import LoadResult, LoadSpec, ServerStats
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import WorkerOutcome

DEFAULT_DURATION_S = 10.0

HeadersArg = Mapping[str, str] | Sequence[tuple[str, str]] | None


class Sampler(Protocol):
    def start(self) -> None: ...

    def stop(self, completed_requests: int) -> ServerStats: ...


class Monitored(Protocol):
    """What ``server=`` needs: a way to sample its process tree, and a liveness check."""

    def monitor(self) -> Sampler: ...

    def check_alive(self) -> None: ...


def http_spec(
    url: str,
    *,
    connections: int = 10,
    duration: float | None = None,
    requests: int | None = None,
    rate: float | None = None,
    arrival: str = "uniform",
    max_connections: int | None = None,
    keepalive: bool = True,
    requests_per_connection: int = 0,
    pipeline: int = 1,
    warmup: float = 0.0,
    timeout: float = 10.0,
    connect_timeout: float = 5.0,
    method: str = "GET",
    headers: HeadersArg = None,
    body: bytes | str = b"",
    workers: int = 1,
    loop: str = "auto",
    verify_tls: bool = True,
    proxy: str | None = None,
    allow_remote: bool = False,
    drain: bool = True,
) -> LoadSpec:
    """Check every argument and build the :class:`LoadSpec` of an HTTP load."""
    target = parse_http_url(url)
    proxy_addr = None
    if proxy is not None:
        p = parse_http_url(proxy if "://" in proxy else f"http://{proxy}")
        guard_target(p.host, allow_remote=allow_remote)
        proxy_addr = (p.host, p.port)
    # A proxy would carry the load onwards, so the target itself must pass the guard too.
    guard_target(target.host, allow_remote=allow_remote)
    spec = LoadSpec(
        kind="http",
        host=target.host,
        port=target.port,
        scheme="https" if target.scheme == "https" else "http",
        target=target.target,
        method=method.upper(),
        headers=_header_pairs(headers),
        body=body.encode() if isinstance(body, str) else bytes(body),
        verify_tls=verify_tls,
        proxy=proxy_addr,
        drain=drain,
        **_common(
            connections=connections,
            duration=duration,
            requests=requests,
            rate=rate,
            arrival=arrival,
            max_connections=max_connections,
            keepalive=keepalive,
            requests_per_connection=requests_per_connection,
            pipeline=pipeline,
            warmup=warmup,
            timeout=timeout,
            connect_timeout=connect_timeout,
            workers=workers,
            loop=loop,
            allow_remote=allow_remote,
        ),
    )
    build_exchange(spec)  # renders the request once, so a bad header fails here
    return spec


def tcp_spec(
    host: str,
    port: int,
    *,
    connections: int = 10,
    duration: float | None = None,
    requests: int | None = None,
    payload: bytes | None = None,
    payload_bytes: int = 512,
    chunk: int | None = None,
    framing: str = "echo",
    rate: float | None = None,
    arrival: str = "uniform",
    max_connections: int | None = None,
    warmup: float = 0.0,
    timeout: float = 10.0,
    connect_timeout: float = 5.0,
    workers: int = 1,
    loop: str = "auto",
    allow_remote: bool = False,
    drain: bool = True,
) -> LoadSpec:
    """Check every argument and build the :class:`LoadSpec` of a raw TCP load."""
    guard_target(host, allow_remote=allow_remote)
    if not 0 < port < 65536:
        raise SpecError(f"port must be 1..65535, got {port}")
    if payload is None:
        if payload_bytes <= 0:
            raise SpecError(f"payload_bytes must be positive, got {payload_bytes}")
        payload = bytes(i % 251 for i in range(payload_bytes))  # a pattern echo can verify
    spec = LoadSpec(
        kind="tcp",
        host=host,
        port=port,
        payload=payload,
        chunk=chunk or 0,
        framing=framing,
        drain=drain,
        **_common(
            connections=connections,
            duration=duration,
            requests=requests,
            rate=rate,
            arrival=arrival,
            max_connections=max_connections,
            keepalive=True,
            requests_per_connection=0,
            pipeline=1,
            warmup=warmup,
            timeout=timeout,
            connect_timeout=connect_timeout,
            workers=workers,
            loop=loop,
            allow_remote=allow_remote,
        ),
    )
    build_exchange(spec)
    return spec


def _common(
    *,
    connections: int,
    duration: float | None,
    requests: int | None,
    rate: float | None,
    arrival: str,
    max_connections: int | None,
    keepalive: bool,
    requests_per_connection: int,
    pipeline: int,
    warmup: float,
    timeout: float,
    connect_timeout: float,
    workers: int,
    loop: str,
    allow_remote: bool,
) -> dict[str, Any]:
    def positive(name: str, value: float | None, *, allow_zero: bool = False) -> None:
        if value is not None and (value < 0 or (value == 0 and not allow_zero)):
            raise SpecError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")

    positive("connections", connections)
    positive("duration", duration)
    positive("requests", requests)
    positive("rate", rate)
    positive("max_connections", max_connections)
    positive("requests_per_connection", requests_per_connection, allow_zero=True)
    positive("pipeline", pipeline)
    positive("warmup", warmup, allow_zero=True)
    positive("timeout", timeout)
    positive("connect_timeout", connect_timeout)
    positive("workers", workers)
    if arrival not in ("uniform", "poisson"):
        raise SpecError(f"arrival must be 'uniform' or 'poisson', got {arrival!r}")
    if rate is not None and pipeline != 1:
        raise SpecError("pipelining is for closed-loop runs: drop pipeline or rate")
    if requests is not None and requests < workers:
        raise SpecError(f"requests ({requests}) must be at least workers ({workers})")
    resolve_loop(loop)
    if duration is None and requests is None:
        duration = DEFAULT_DURATION_S
    return {
        "connections": int(connections),
        "duration_s": float(duration) if duration is not None else None,
        "requests": int(requests) if requests is not None else None,
        "rate": float(rate) if rate is not None else None,
        "arrival": arrival,
        "max_connections": max_connections,
        "keepalive": keepalive,
        "requests_per_connection": int(requests_per_connection),
        "pipeline": int(pipeline),
        "warmup_s": float(warmup),
        "timeout_s": float(timeout),
        "connect_timeout_s": float(connect_timeout),
        "workers": int(workers),
        "loop": loop,
        "allow_remote": allow_remote,
    }


def _header_pairs(headers: HeadersArg) -> tuple[tuple[str, str], ...]:
    if headers is None:
        return ()
    items = headers.items() if isinstance(headers, Mapping) else headers
    return tuple((str(k), str(v)) for k, v in items)


def _pool_size(spec: LoadSpec) -> int:
    if spec.rate is not None:
        return spec.max_connections or max(spec.connections, 1024)
    return spec.connections


def run_spec(spec: LoadSpec, server: Monitored | None = None) -> LoadResult:
    """Run a checked spec in this thread (and worker processes) and merge the result."""
    ensure_fd_budget(-(-_pool_size(spec) // spec.workers))
    sampler = _start_sampler(server)
    outcomes = run_workers(spec)
    return _finish(spec, outcomes, sampler, server)


async def run_spec_async(spec: LoadSpec, server: Monitored | None = None) -> LoadResult:
    """As :func:`run_spec`, on the caller's running loop (more workers run in processes)."""
    ensure_fd_budget(-(-_pool_size(spec) // spec.workers))
    sampler = _start_sampler(server)
    if spec.workers == 1:
        loop_name = type(asyncio.get_running_loop()).__module__.split(".")[0]
        share = split_load(spec, monotonic_ns())[0]
        outcomes = [await run_share_async(spec, share, loop_name)]
    else:
        outcomes = await asyncio.get_running_loop().run_in_executor(None, run_workers, spec)
    return _finish(spec, outcomes, sampler, server)


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
) -> LoadResult:
    ok = sum(sum(o.latency_counts.values()) for o in outcomes)
    stats = sampler.stop(ok) if sampler is not None else None
    result = merge_outcomes(spec, outcomes, stats)
    if server is not None:
        try:
            server.check_alive()
        except ServerError as exc:
            # The figures stay (they are what the clients saw), but they describe a crash.
            reason = f"server died during the load: {exc}"
            result = dataclasses.replace(
                result, valid=False, invalid_reasons=(*result.invalid_reasons, reason)
            )
    connect_errors = result.errors.get("connect", 0)
    if connect_errors and result.ok == 0 and result.errors_total == connect_errors and not server:
        # Nothing ever got through (connects still pending at a deadline are in flight).
        sample = result.error_samples.get("connect", "")
        hint = "is the server running and listening on that address?"
        if "TLS" in sample or "certificate" in sample:
            hint = "for a self-signed test server pass verify_tls=False (CLI: --insecure)"
        raise TargetUnreachableError(
            f"no connection to {spec.url} succeeded ({connect_errors} attempts; {sample}): {hint}"
        )
    return result


def http_load(url: str, *, server: Monitored | None = None, **options: Any) -> LoadResult:
    """Drive HTTP load at ``url`` and return what was measured (see :func:`http_spec`)."""
    return run_spec(http_spec(url, **options), server)


def echo_load(
    host: str, port: int, *, server: Monitored | None = None, **options: Any
) -> LoadResult:
    """Send payloads over raw TCP and read them back verified (see :func:`tcp_spec`)."""
    return run_spec(tcp_spec(host, port, **options), server)


async def http_load_async(
    url: str, *, server: Monitored | None = None, **options: Any
) -> LoadResult:
    return await run_spec_async(http_spec(url, **options), server)


async def echo_load_async(
    host: str, port: int, *, server: Monitored | None = None, **options: Any
) -> LoadResult:
    return await run_spec_async(tcp_spec(host, port, **options), server)
