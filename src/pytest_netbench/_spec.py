"""Turning what a user asked for into a checked, complete :class:`LoadSpec`.

The one home of every argument check and default of a load, used alike by the Python API,
the CLI and the plugin: the target (loopback unless allowed), the numbers, the request it
renders. Everything here runs before any socket exists, so a mistake costs no traffic.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._model import MIX_ORDERS, LoadSpec, MixOrder, Request
from pytest_netbench._proto import http as http_proto
from pytest_netbench._proto import tcp as tcp_proto
from pytest_netbench._target import guard_target, parse_http_url

# A load given neither a duration nor a request count runs this long.
DEFAULT_DURATION_S = 10.0
LOOPS = ("auto", "uvloop", "asyncio", "trio")
# Timeline rows finer than this cost more in folding than they show.
FINEST_TIMELINE_RESOLUTION_S = 0.01
# One period of a weighted mix is pre-computed; only the weights' ratios matter.
MAX_MIX_PERIOD = 10_000

HeadersArg = Mapping[str, str] | Sequence[tuple[str, str]] | None


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
    timeline_resolution: float = 1.0,
    mix: Sequence[Request] | None = None,
    mix_order: str = "cycle",
    connect_first: bool = False,
    connect_rate: float | None = None,
    probe_every: float | None = None,
) -> LoadSpec:
    """Check every argument and build the :class:`LoadSpec` of an HTTP load.

    ``mix``: several :class:`Request` kinds sent in turn (``mix_order="cycle"``) or
    interleaved by their weights (``"weighted"``) instead of one request; the URL then
    names the server only. ``timeline_resolution``: the span of a timeline row, seconds.
    ``connect_first``: open every connection before the window (closed loop), at most
    ``connect_rate`` a second. ``probe_every``: every this many seconds one more client
    connects, makes one request and disconnects; its latency is ``result.probe``.
    """
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
        mix=_checked_mix(mix, method=method, body=body, target=target.target, loop=loop),
        mix_order=_checked_mix_order(mix_order, mix),
        **_checked_common(
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
            timeline_resolution=timeline_resolution,
            connect_first=connect_first,
            connect_rate=connect_rate,
            probe_every=probe_every,
        ),
    )
    _check_renders(spec)
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
    timeline_resolution: float = 1.0,
    connect_first: bool | None = None,
    connect_rate: float | None = None,
    probe_every: float | None = None,
) -> LoadSpec:
    """Check every argument and build the :class:`LoadSpec` of a raw TCP load.

    ``connect_first`` (default: in closed loop) opens every connection before the window,
    at most ``connect_rate`` a second, so the window measures exchanges, not connecting.
    ``probe_every``: every this many seconds one more client connects, makes one exchange
    and disconnects; how long it waited is ``result.probe`` (seed 002's client delay).
    """
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
        **_checked_common(
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
            timeline_resolution=timeline_resolution,
            connect_first=_default_connect_first(connect_first, rate, loop),
            connect_rate=connect_rate,
            probe_every=probe_every,
        ),
    )
    _check_renders(spec)
    return spec


def _default_connect_first(asked: bool | None, rate: float | None, loop: str) -> bool:
    """An echo flood opens its connections first unless told not to, where it can."""
    return rate is None and loop != "trio" if asked is None else asked


def scale_spec(spec: LoadSpec, factor: float) -> LoadSpec:
    """The same load made ``factor`` times as long (duration, request count and warm-up),
    as ``--netbench-scale`` asks; connections and rate stay, so the pressure is the same."""
    if factor <= 0:
        raise SpecError(f"the scale factor must be > 0, got {factor!r}")
    if factor == 1.0:
        return spec
    changes: dict[str, Any] = {"warmup_s": spec.warmup_s * factor}
    if spec.duration_s is not None:
        changes["duration_s"] = spec.duration_s * factor
    if spec.requests is not None:
        changes["requests"] = max(spec.workers, round(spec.requests * factor))
    return dataclasses.replace(spec, **changes)


_SECONDS = frozenset({"duration", "warmup", "timeout", "connect_timeout", "probe_every"})


def _checked_common(
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
    timeline_resolution: float,
    connect_first: bool,
    connect_rate: float | None,
    probe_every: float | None,
) -> dict[str, Any]:
    """The checks and defaults HTTP and raw TCP loads share, as LoadSpec fields."""

    def positive(name: str, value: float | None, *, allow_zero: bool = False) -> None:
        if value is None:
            return
        # bool is an int to Python, but connections=True is a mistake, not 1.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            unit = " of seconds" if name in _SECONDS else ""
            raise SpecError(f"{name} must be a number{unit}, got {value!r}")
        if value < 0 or (value == 0 and not allow_zero):
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
    check_timeline_resolution(timeline_resolution, loop)
    if arrival not in ("uniform", "poisson"):
        raise SpecError(f"arrival must be 'uniform' or 'poisson', got {arrival!r}")
    if rate is not None and pipeline != 1:
        raise SpecError("pipelining is for closed-loop runs: drop pipeline or rate")
    if requests is not None and requests < workers:
        raise SpecError(f"requests ({requests}) must be at least workers ({workers})")
    check_loop(loop)
    positive("connect_rate", connect_rate)
    positive("probe_every", probe_every)
    if connect_first and rate is not None:
        raise SpecError(
            "connect_first is for closed-loop runs (an open-loop pool grows as the server"
            " falls behind): drop connect_first or rate"
        )
    if connect_first and loop == "trio":
        raise SpecError("connect_first needs the asyncio/uvloop engine: use loop='auto'")
    if connect_rate is not None and not connect_first:
        raise SpecError(
            "connect_rate (--connect-rate) paces connect_first (--connect-first): turn that on too"
        )
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
        "timeline_resolution_s": float(timeline_resolution),
        "connect_first": bool(connect_first),
        "connect_rate": float(connect_rate) if connect_rate is not None else None,
        "probe_every_s": float(probe_every) if probe_every is not None else None,
    }


def check_timeline_resolution(seconds: float, loop: str) -> None:
    """A timeline row's span: a number of seconds, not too fine, on a loop that can keep it."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise SpecError(f"timeline_resolution must be a number of seconds, got {seconds!r}")
    if not seconds >= FINEST_TIMELINE_RESOLUTION_S:
        raise SpecError(
            f"timeline_resolution must be at least {FINEST_TIMELINE_RESOLUTION_S} s, got"
            f" {seconds!r}: finer rows cost more CPU to fold than they show"
        )
    if seconds != 1.0 and loop == "trio":
        raise SpecError(
            "a timeline_resolution other than 1 s needs the asyncio/uvloop engine (the trio"
            " engine folds its timeline once a second): use loop='auto', or drop"
            " timeline_resolution"
        )


def check_loop(name: str) -> None:
    """A loop name the engine knows, and installed if it was asked for by name."""
    if name not in LOOPS:
        raise SpecError(f"unknown loop {name!r}: use {', '.join(LOOPS)}")
    if name == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:
            raise SpecError(
                "loop='uvloop' was asked for but uvloop is not installed:"
                " pip install uvloop, or use loop='asyncio'"
            ) from None
    if name == "trio":
        try:
            import trio  # noqa: F401
        except ImportError:
            raise SpecError(
                "loop='trio' was asked for but trio is not installed:"
                " pip install 'pytest-netbench[trio]', or use loop='auto'"
            ) from None


def _checked_mix(
    mix: Sequence[Request] | None, *, method: str, body: bytes | str, target: str, loop: str
) -> tuple[Request, ...]:
    """The kinds of a request mix, each with its name; () without one."""
    if mix is None:
        return ()
    if isinstance(mix, Request) or not isinstance(mix, Sequence) or isinstance(mix, str):
        raise SpecError(f"mix must be a list of Request(...), got {mix!r}")
    if not mix:
        raise SpecError("mix is empty: give at least one Request(...), or drop mix")
    if method.upper() != "GET" or body:
        raise SpecError("with mix=, the method and body go on each Request: drop method= and body=")
    if target != "/":
        raise SpecError(
            f"with mix=, the URL names the server only, but it has the path {target!r}: put"
            " the path on each Request"
        )
    if loop == "trio":
        raise SpecError(
            "request mixes run on the asyncio/uvloop engine: use loop='auto' (or 'asyncio')"
        )
    kinds: list[Request] = []
    for entry in mix:
        if not isinstance(entry, Request):
            raise SpecError(f"every entry of mix must be a Request(...), got {entry!r}")
        if not entry.path.startswith("/"):
            raise SpecError(f"{entry.label}: a mix path starts with '/', got {entry.path!r}")
        weight = entry.weight
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise SpecError(f"{entry.label}: weight must be a whole number >= 1, got {weight!r}")
        kinds.append(dataclasses.replace(entry, method=entry.method.upper(), name=entry.label))
    names = [k.name for k in kinds]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SpecError(
            f"two entries of mix are both named {repeated[0]!r}: give each a distinct name="
        )
    heads = sum(1 for k in kinds if k.method == "HEAD")
    if 0 < heads < len(kinds):
        raise SpecError(
            "HEAD cannot share a mix with other methods (a HEAD response has no body whatever"
            " its headers say, which the response parser must know beforehand): load HEAD"
            " requests on their own"
        )
    return tuple(kinds)


def _checked_mix_order(mix_order: str, mix: Sequence[Request] | None) -> MixOrder:
    for order in MIX_ORDERS:
        if mix_order == order:
            break
    else:
        raise SpecError(f"mix_order must be one of {', '.join(MIX_ORDERS)}, got {mix_order!r}")
    if mix:
        weights = [getattr(r, "weight", 1) for r in mix]
        if order == "cycle" and any(w != 1 for w in weights):
            raise SpecError(
                "weights apply to mix_order='weighted'; 'cycle' sends each request in turn:"
                " pass mix_order='weighted' or drop the weights"
            )
        if order == "weighted" and _weighted_period(weights) > MAX_MIX_PERIOD:
            raise SpecError(
                f"the mix's weights add up to more than {MAX_MIX_PERIOD:,} (after dividing by"
                " their common factor): use smaller weights, only their ratios matter"
            )
    return order


def _weighted_period(weights: Sequence[int]) -> int:
    common = math.gcd(*weights)
    return sum(weights) // common if common else 0


def _check_renders(spec: LoadSpec) -> None:
    """Render the request (or parse the framing) once, so bad input fails here, not in a
    worker; the workers render their own copy from the same functions."""
    if spec.kind == "http":
        for request in spec.mix or (None,):
            try:
                http_proto.render_spec_request(spec, request)
            except ValueError as exc:
                where = f" {request.name!r}" if request is not None else ""
                raise SpecError(f"cannot build the request{where}: {exc}") from None
        return
    if not spec.payload:
        raise SpecError("a TCP load needs a payload of at least one byte")
    try:
        tcp_proto.parse_framing(spec.framing)
    except ValueError as exc:
        raise SpecError(str(exc)) from None


def _header_pairs(headers: HeadersArg) -> tuple[tuple[str, str], ...]:
    if headers is None:
        return ()
    items = headers.items() if isinstance(headers, Mapping) else headers
    return tuple((str(k), str(v)) for k, v in items)
