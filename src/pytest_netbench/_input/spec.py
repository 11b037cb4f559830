"""Turning what a user asked for into a checked, complete :class:`LoadSpec`.

The one home of every argument check and default of a load, used alike by the Python API,
the CLI and the plugin: the target (loopback unless allowed), the numbers, the request it
renders. Everything here runs before any socket exists, so a mistake costs no traffic.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from pytest_netbench._errors import SpecError
from pytest_netbench._host.cpus import parse_cpus
from pytest_netbench._input.feeders import check_templates, checked_feeders, checked_seed
from pytest_netbench._input.options import (
    BY_NAME,
    LOAD_OPTIONS,
    EchoOptions,
    HeadersArg,
    HttpOptions,
    WsOptions,
    with_defaults,
)
from pytest_netbench._input.stages import check_ramp, checked_stages, ramp_start
from pytest_netbench._input.streams import checked_goodput, checked_stream
from pytest_netbench._input.target import guard_target, parse_http_url
from pytest_netbench._model import (
    ARRIVALS,
    HTTP_PROTOCOLS,
    LOOPS,
    MIX_ORDERS,
    LoadSpec,
    MixOrder,
    Request,
)
from pytest_netbench._model.checks import Check, check_slots, checks_from
from pytest_netbench._proto import http as http_proto
from pytest_netbench._proto import tcp as tcp_proto
from pytest_netbench._proto.templates import has_placeholder, request_problem
from pytest_netbench._public import publish

# A load given neither a duration nor a request count runs this long.
DEFAULT_DURATION_S = 10.0
# Timeline rows finer than this cost more in folding than they show.
FINEST_TIMELINE_RESOLUTION_S = 0.01
# One period of a weighted mix is pre-computed; only the weights' ratios matter.
MAX_MIX_PERIOD = 10_000

# The options that become LoadSpec fields of both kinds, checked by ``_checked_common``.
_COMMON = tuple(option.name for option in LOAD_OPTIONS if {"http", "echo"} <= option.loads)


def http_spec(url: str, **options: Unpack[HttpOptions]) -> LoadSpec:
    """Check every option (:data:`~pytest_netbench._input.options.LOAD_OPTIONS`) and build the
    :class:`LoadSpec` of an HTTP load at ``url``.

    ``mix``: several :class:`Request` kinds sent in turn (``mix_order="cycle"``) or
    interleaved by their weights (``"weighted"``) instead of one request; the URL then
    names the server only. ``feeders``: named feeders whose values fill the ``${name}``
    placeholders of the path, header values and body (see docs/traffic.md), drawn from
    ``seed``. ``timeline_resolution``: the span of a timeline row, seconds.
    ``connect_first``: open every connection before the window (closed loop), at most
    ``connect_rate`` a second. ``probe_every``: every this many seconds one more client
    connects, makes one request and disconnects; its latency is ``result.probe``.
    """
    o = with_defaults("http", options)
    target = parse_http_url(url)
    proxy_addr = None
    allow_remote = bool(o["allow_remote"])
    if o["proxy"] is not None:
        proxy = str(o["proxy"])
        p = parse_http_url(proxy if "://" in proxy else f"http://{proxy}")
        guard_target(p.host, allow_remote=allow_remote)
        proxy_addr = (p.host, p.port)
    # A proxy would carry the load onwards, so the target itself must pass the guard too.
    guard_target(target.host, allow_remote=allow_remote)
    method, body, mix = str(o["method"]), o["body"], o["mix"]
    spec = LoadSpec(
        kind="http",
        host=target.host,
        port=target.port,
        scheme="https" if target.scheme == "https" else "http",
        target=target.target,
        method=method.upper(),
        headers=_header_pairs(o["headers"]),
        body=body.encode() if isinstance(body, str) else bytes(body),
        verify_tls=bool(o["verify_tls"]),
        proxy=proxy_addr,
        mix=_checked_mix(mix, method=method, body=body, target=target.target),
        mix_order=_checked_mix_order(o["mix_order"], mix),
        checks=_checked_checks(o["checks"], mix),
        feeders=checked_feeders(o["feeders"]),
        seed=checked_seed(o["seed"]),
        protocol=_checked_protocol(o["protocol"], target.scheme),
        streams=_checked_streams(o["streams"], o["protocol"]),
        keepalive=_checked_keepalive(o["keepalive"], o["pipeline"], o["requests_per_connection"]),
        goodput=checked_goodput(o["goodput"], o["stream"]),
        **checked_stream(
            o["stream"],
            o["stream_events"],
            o["stream_end"],
            pipeline=o["pipeline"],
            mix=mix,
        ),
        **_checked_common(
            {name: o[name] for name in _COMMON},
            requests_per_connection=o["requests_per_connection"],
            pipeline=o["pipeline"],
            connect_first=bool(o["connect_first"]),
            connections_given="connections" in options,
        ),
    )
    _check_h2(spec)
    _check_auto(spec)
    _check_renders(spec)
    head = (spec.mix[0].method if spec.mix else spec.method) == "HEAD"
    if head and (spec.checks or any(r.checks for r in spec.mix)):
        raise SpecError("a HEAD response has no body to check: drop checks, or use GET")
    return spec


def echo_spec(host: str, port: int, **options: Unpack[EchoOptions]) -> LoadSpec:
    """Check every option (:data:`~pytest_netbench._input.options.LOAD_OPTIONS`) and build the
    :class:`LoadSpec` of a raw TCP load at ``host``:``port``.

    ``connect_first`` (default: in closed loop) opens every connection before the window,
    at most ``connect_rate`` a second, so the window measures exchanges, not connecting.
    ``probe_every``: every this many seconds one more client connects, makes one exchange
    and disconnects; how long it waited is ``result.probe`` (seed 002's client delay).
    """
    o = with_defaults("echo", options)
    guard_target(host, allow_remote=bool(o["allow_remote"]))
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise SpecError(f"port must be 1..65535, got {port!r}")
    payload = o["payload"]
    if payload is None:
        size = o["payload_bytes"]
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise SpecError(f"payload_bytes must be a positive whole number, got {size!r}")
        payload = bytes(i % 251 for i in range(size))  # a pattern echo can verify
    elif isinstance(payload, str):
        payload = payload.encode()
    elif not isinstance(payload, (bytes, bytearray, memoryview)):
        hint = f"; for {payload!r} bytes of a pattern, pass payload_bytes={payload!r}"
        raise SpecError(
            f"payload must be bytes (or text), got {type(payload).__name__}"
            + (hint if isinstance(payload, int) and not isinstance(payload, bool) else "")
        )
    else:
        payload = bytes(payload)
    spec = LoadSpec(
        kind="echo",
        host=host,
        port=port,
        payload=payload,
        chunk=o["chunk"] or 0,
        framing=o["framing"],
        **_checked_common(
            {name: o[name] for name in _COMMON},
            requests_per_connection=0,
            pipeline=1,
            connect_first=_default_connect_first(
                o["connect_first"], o["rate"], o["loop"], bool(o["stages"])
            ),
            connections_given="connections" in options,
        ),
    )
    _check_renders(spec)
    return spec


def ws_spec(url: str, **options: Unpack[WsOptions]) -> LoadSpec:
    """Check every option (:data:`~pytest_netbench._input.options.LOAD_OPTIONS`) and build the
    :class:`LoadSpec` of a WebSocket load at ``url`` (``ws://``, or ``wss://`` over TLS,
    checked unless ``verify_tls=False``): each connection opens
    with the handshake (``headers``, ``subprotocols``), then sends ``message`` and awaits
    its echo, again and again; a request of the result is one message round trip. With
    ``listen=True`` the connections are held and the server's pushes counted instead
    (``ping_every``, ``stamp_field``, ``stamp_binary``; see ``_engine/rules/listen_rules``).
    """
    # WebSocket's checks (and its frames) are imported by a WebSocket load only (issue 35).
    from pytest_netbench._input.websocket import (
        check_handshake,
        check_handshake_headers,
        checked_answer,
        checked_listen,
        checked_message,
        checked_subprotocols,
        parse_ws_url,
    )

    o = with_defaults("ws", options)
    target = parse_ws_url(url)
    guard_target(target.host, allow_remote=bool(o["allow_remote"]))
    headers = _header_pairs(o["headers"])
    check_handshake_headers(headers)
    subprotocols = checked_subprotocols(o["subprotocols"])
    check_handshake(target.target, headers, subprotocols)
    message, binary = checked_message(o["message"], o["message_bytes"], bool(o["binary"]))
    answer, id_field, message, pipeline = checked_answer(o, options, message, binary)
    listen = checked_listen(o, options)
    connect_first = o["connect_first"]
    if listen and connect_first is None:
        # Held connections open before the window (the asyncio engine's connect phase;
        # trio's listen load opens them as its share starts).
        connect_first = o["loop"] != "trio"
    return LoadSpec(
        kind="ws",
        host=target.host,
        port=target.port,
        scheme="https" if target.scheme == "wss" else "http",  # wss: the TLS of https
        verify_tls=bool(o["verify_tls"]),
        target=target.target,
        headers=headers,
        payload=message,
        binary=binary,
        subprotocols=subprotocols,
        answer=answer,
        id_field=id_field,
        listen=listen,
        ping_every_s=_float_or_none(o["ping_every"]),
        stamp_field=o["stamp_field"],
        stamp_binary=bool(o["stamp_binary"]),
        **_checked_common(
            # stages are no WebSocket option (the table's row): the common checks see none
            {name: o.get(name) for name in _COMMON},
            requests_per_connection=0,
            pipeline=pipeline,
            connect_first=bool(connect_first),
            connections_given="connections" in options,
        ),
    )


def _checked_protocol(protocol: object, scheme: str) -> Any:
    if protocol not in HTTP_PROTOCOLS:
        raise SpecError(
            f"protocol must be one of {', '.join(HTTP_PROTOCOLS)} (h2: HTTP/2; auto: what the"
            f" server picks by ALPN over https://), got {protocol!r}"
        )
    # Nothing to negotiate over cleartext: without prior knowledge HTTP/1.1, as curl and
    # browsers (h2c's Upgrade is deprecated by RFC 9113); only https:// stays "auto" until
    # the load runs and asks the server.
    return "http1" if protocol == "auto" and scheme != "https" else protocol


def _checked_streams(streams: object, protocol: object) -> int:
    if isinstance(streams, bool) or not isinstance(streams, int) or streams < 1:
        raise SpecError(f"streams must be a whole number >= 1, got {streams!r}")
    if streams != 1 and protocol == "auto":
        # Refused whatever the server would pick, so a load means the same against both.
        raise SpecError(
            f"streams={streams} asks for concurrent HTTP/2 streams, but protocol='auto' may"
            " speak HTTP/1.1 (always over http://, over https:// when the server picks it):"
            " pass protocol='h2' for streams (CLI: --protocol h2), or drop streams so a"
            " connection has one request in flight whichever version is spoken"
        )
    if streams != 1 and protocol != "h2":
        raise SpecError(
            f"streams={streams} asks for concurrent HTTP/2 streams, but the load speaks"
            " HTTP/1.1: pass protocol='h2' too (CLI: --protocol h2), or for HTTP/1.1 requests"
            " in flight on a connection use pipeline"
        )
    return streams


# What an HTTP/2 load cannot do yet, and what to do instead (issue 22).
_H2_NOT_YET: tuple[tuple[str, str], ...] = (
    ("pipeline", "pipeline is HTTP/1.1's: over HTTP/2 use streams= for requests in flight"),
    ("keepalive", "keepalive=False is HTTP/1.1's: HTTP/2 keeps its connections"),
    (
        "requests_per_connection",
        "requests_per_connection is not available over HTTP/2 yet: leave it 0",
    ),
    ("proxy", "a proxy is not available over HTTP/2: drop proxy"),
    ("probe_every", "the client-delay probe speaks HTTP/1.1 only: drop probe_every"),
    (
        "checks",
        "checks on responses are HTTP/1.1's for now: drop checks, or protocol='http1'",
    ),
)


def _check_h2(spec: LoadSpec) -> None:
    """The options an HTTP/2 load cannot take (yet), refused before any socket."""
    if spec.protocol != "h2":
        return
    given = {
        "pipeline": spec.pipeline != 1,
        "keepalive": not spec.keepalive,
        "requests_per_connection": spec.requests_per_connection != 0,
        "proxy": spec.proxy is not None,
        "probe_every": spec.probe_every_s is not None,
        "checks": bool(spec.checks) or any(r.checks for r in spec.mix),
    }
    for name, why in _H2_NOT_YET:
        if given[name]:
            raise SpecError(f"protocol='h2': {why}")
    from pytest_netbench._proto.h2_headers import encode_spec_request  # HPACK: h2's only

    for request in spec.mix or (None,):
        try:
            encode_spec_request(spec, request)
        except ValueError as exc:
            where = f" {request.name!r}" if request is not None else ""
            raise SpecError(f"cannot build the HTTP/2 request{where}: {exc}") from None


def _check_auto(spec: LoadSpec) -> None:
    """``protocol="auto"`` over https:// may speak either version, so it takes only what
    both take: HTTP/2's refusals apply to it too, before any socket."""
    if spec.protocol != "auto":
        return
    try:
        _check_h2(dataclasses.replace(spec, protocol="h2"))
    except SpecError as exc:
        reason = str(exc).removeprefix("protocol='h2': ")
        raise SpecError(
            "protocol='auto' speaks HTTP/2 when the server picks h2, so it takes only what"
            f" both HTTP versions take: {reason} (or pass protocol='http1' to keep HTTP/1.1's"
            " options)"
        ) from None


def _default_connect_first(asked: bool | None, rate: float | None, loop: str, ramp: bool) -> bool:
    """An echo flood opens its connections first unless told not to, where it can (not on
    a ramp, whose connections come and go)."""
    return rate is None and loop != "trio" and not ramp if asked is None else asked


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
    if spec.stages:  # the same ramp, stretched: each stage as much longer as the whole
        changes["stages"] = tuple(
            dataclasses.replace(stage, duration_s=stage.duration_s * factor)
            for stage in spec.stages
        )
    if spec.requests is not None:
        changes["requests"] = max(spec.workers, round(spec.requests * factor))
    return dataclasses.replace(spec, **changes)


# Numeric options that may be 0 (the rest must be > 0 when given).
_MAY_BE_ZERO = frozenset({"warmup", "requests_per_connection"})
# Numeric options with checks of their own.
_CHECKED_APART = frozenset({"timeline_resolution", "payload_bytes", "chunk"})


def _check_number(name: str, value: object, *, allow_zero: bool) -> None:
    """A numeric option: a number (not a bool), > 0 (or >= 0 where 0 means something)."""
    if value is None:
        return
    # bool is an int to Python, but connections=True is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        unit = " of seconds" if BY_NAME[name].takes == "seconds" else ""
        raise SpecError(f"{name} must be a number{unit}, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise SpecError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")


def _checked_keepalive(
    keepalive: object, pipeline: object, requests_per_connection: object
) -> bool:
    """``keepalive``, refused beside pipelining: without keep-alive (and without
    ``requests_per_connection``) a connection carries one request, so nothing can be
    pipelined behind it."""
    if not keepalive and not requests_per_connection and pipeline != 1:
        raise SpecError(
            f"pipeline={pipeline} needs keep-alive: with keepalive=False each connection"
            " carries one request; drop pipeline, or keep keepalive=False and set"
            " requests_per_connection"
        )
    return bool(keepalive)


def _checked_common(
    o: dict[str, Any],
    *,
    requests_per_connection: int,
    pipeline: int,
    connect_first: bool,
    connections_given: bool,
) -> dict[str, Any]:
    """The checks and defaults HTTP and raw TCP loads share, as LoadSpec fields."""
    numbers = {**o, "requests_per_connection": requests_per_connection, "pipeline": pipeline}
    stages = checked_stages(o["stages"])
    # A ramp may start from nothing (k6's startRate and startVUs may be 0).
    may_be_zero = _MAY_BE_ZERO | ({"rate", "connections"} if stages else set())
    for name, value in numbers.items():
        if BY_NAME[name].takes in ("count", "seconds", "per_second") and name not in _CHECKED_APART:
            _check_number(name, value, allow_zero=name in may_be_zero)
    rate, requests, workers, loop = o["rate"], o["requests"], o["workers"], o["loop"]
    check_timeline_resolution(o["timeline_resolution"], loop)
    if o["arrival"] not in ARRIVALS:
        raise SpecError(f"arrival must be one of {', '.join(ARRIVALS)}, got {o['arrival']!r}")
    if rate is not None and pipeline != 1:
        raise SpecError("pipelining is for closed-loop runs: drop pipeline or rate")
    if requests_per_connection and pipeline > requests_per_connection:
        raise SpecError(
            f"pipeline={pipeline} keeps more requests on a connection at once than"
            f" requests_per_connection={requests_per_connection} lets it carry: lower"
            f" pipeline to at most {requests_per_connection}"
        )
    if requests is not None and requests < workers:
        raise SpecError(f"requests ({requests}) must be at least workers ({workers})")
    check_loop(loop)
    if connect_first and rate is not None:
        raise SpecError(
            "connect_first is for closed-loop runs (an open-loop pool grows as the server"
            " falls behind): drop connect_first or rate"
        )
    if connect_first and loop == "trio":
        raise SpecError("connect_first needs the asyncio/uvloop engine: use loop='auto'")
    if o["connect_rate"] is not None and not connect_first:
        raise SpecError(
            "connect_rate (--connect-rate) paces connect_first (--connect-first): turn that on too"
        )
    check_ramp(stages, o, connections_given=connections_given, connect_first=connect_first)
    duration = o["duration"]
    if stages:
        duration = sum(stage.duration_s for stage in stages)
    elif duration is None and requests is None:
        duration = DEFAULT_DURATION_S
    return {
        "connections": int(o["connections"]),
        "duration_s": _float_or_none(duration),
        "requests": int(requests) if requests is not None else None,
        "rate": _float_or_none(rate),
        "arrival": o["arrival"],
        "stages": stages,
        "max_connections": o["max_connections"],
        "requests_per_connection": int(requests_per_connection),
        "pipeline": int(pipeline),
        "warmup_s": float(o["warmup"]),
        "timeout_s": float(o["timeout"]),
        "connect_timeout_s": float(o["connect_timeout"]),
        "workers": int(workers),
        "cpus": parse_cpus(o["cpus"]),
        "loop": loop,
        "allow_remote": bool(o["allow_remote"]),
        "drain": bool(o["drain"]),
        "timeline_resolution_s": float(o["timeline_resolution"]),
        "connect_first": bool(connect_first),
        "connect_rate": _float_or_none(o["connect_rate"]),
        "probe_every_s": _float_or_none(o["probe_every"]),
        **(ramp_start(o, connections_given=connections_given) if stages else {}),
    }


def _float_or_none(value: float | None) -> float | None:
    return float(value) if value is not None else None


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
    mix: Sequence[Request] | None, *, method: str, body: bytes | str, target: str
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


def _checked_checks(given: object, mix: Sequence[Request] | None) -> tuple[Check, ...]:
    """The load's checks, each named; the mix's own beside them may share no name while
    saying something else (``check_slots`` refuses that)."""
    checks = checks_from(given)
    kinds = [r.checks for r in mix or () if isinstance(r, Request)]
    check_slots(checks, kinds)
    return checks


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
            where = f" {request.name!r}" if request is not None else ""
            try:
                rendered = http_proto.render_spec_request(spec, request)
            except ValueError as exc:
                raise SpecError(f"cannot build the request{where}: {exc}") from None
            # What llhttp refuses (a header name with a space, a control character, a
            # method or path not in ASCII, a Content-Length the body does not fill) a
            # server would refuse on every request. One with placeholders is checked
            # rendered from its feeders' first values (check_templates).
            problem = "" if has_placeholder(rendered) else request_problem(rendered)
            if problem:
                raise SpecError(
                    f"cannot build the request{where}: it is not valid HTTP/1.1 ({problem}):"
                    f" {rendered[:200]!r}"
                )
        check_templates(spec)
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


publish(globals())
