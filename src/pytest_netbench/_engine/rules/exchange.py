"""What one request/response exchange is: the bytes to write and how to frame the answer.

Built once per run from a :class:`LoadSpec`, so the hot path re-sends pre-rendered bytes
and never formats anything per request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace
from time import monotonic_ns
from typing import TYPE_CHECKING

from pytest_netbench._model import LoadSpec
from pytest_netbench._model.checks import check_slots
from pytest_netbench._proto import http as http_proto
from pytest_netbench._proto.checks import ResponseChecks, checking_framer
from pytest_netbench._proto.framing import Framer, OnError, OnResponse

# HTTP/2's parts (HPACK, frames, gRPC), WebSocket's, a stream's and raw TCP's are imported
# by the load that uses them only: an HTTP/1.1 command starts without them (issue 35).
if TYPE_CHECKING:
    from pytest_netbench._proto import websocket as ws_proto
    from pytest_netbench._proto.h2_client import H2Request
    from pytest_netbench._proto.streaming import StreamLedger


@dataclass(frozen=True, slots=True)
class Exchange:
    """Pre-rendered request chunks plus a framer factory; ``is_http`` picks result rules.

    ``parser_framed``: HTTP whose responses httptools frames alone (every method but HEAD),
    which the closed-loop keep-alive fast path (``fused_http``) relies on.

    ``verified_echo``: raw TCP whose answer is the payload itself, checked byte for byte
    (the ``echo`` framing), which the asyncio engine receives in place (``echo_connection``).

    A load whose requests vary (a mix, or templates filled from feeders) has no
    ``chunks``: the run takes them from its share's ``RequestSource`` (see
    ``accounting``). ``mix_requests`` holds a mix's kinds as they are sent when they are
    fixed (no feeders): the client-delay probe sends the first.
    """

    chunks: tuple[bytes, ...]
    size: int
    is_http: bool
    make_framer: Callable[[OnResponse, OnError], Framer]
    connect_host: str
    connect_port: int
    parser_framed: bool = False
    mix_requests: tuple[bytes, ...] = ()
    verified_echo: bool = False
    # A WebSocket load: its handshake and message (``ws_connection`` sends and frames them).
    websocket: ws_proto.WsSetup | None = None
    # An HTTP/2 load: its request, its header block encoded once (``h2_connection``); a
    # mix's kinds, each encoded once, in the mix's order.
    h2: H2Request | None = None
    h2_mix: tuple[H2Request, ...] = ()
    # A load with checks: its checks (``make_framer`` makes framers that run them) and,
    # per kind of its mix (one entry without a mix), the bits of those that apply to it.
    checks: ResponseChecks | None = None
    check_masks: tuple[int, ...] = ()
    # A streaming load (``stream=``): where its framers leave each finished stream.
    stream: StreamLedger | None = None


# The most one read of an echo takes (uvloop reads up to 256 KiB at a time itself).
_ECHO_SCRATCH_BYTES = 256 * 1024


def build_exchange(spec: LoadSpec) -> Exchange:
    """The exchange a checked spec describes (``_input.spec`` has already refused bad input)."""
    if spec.kind == "http":
        exchange = _http_exchange(spec)
        if spec.stream is not None:
            # Each response read as it arrives: its framer times the events (no fast path).
            from pytest_netbench._proto.streaming import StreamCheck, StreamLedger

            check = StreamCheck(spec.stream_events, spec.stream_end)
            ledger = StreamLedger(spec.stream, check, monotonic_ns)  # type: ignore[arg-type]
            if spec.goodput:
                slo = dict(spec.goodput)
                ledger.goodput = tuple(  # type: ignore[assignment]
                    round(slo[name] * 1e6) if name in slo else -1
                    for name in ("ttft", "tpot", "e2el")
                )
            exchange = replace(
                exchange, make_framer=ledger.framer, parser_framed=False, stream=ledger
            )
        return exchange
    if spec.kind == "ws":
        return _ws_exchange(spec)
    return _tcp_exchange(spec)


def _http_exchange(spec: LoadSpec) -> Exchange:
    if spec.protocol == "h2":
        return _h2_exchange(spec)
    exchange = _http1_exchange(spec)
    if not spec.checks and not any(r.checks for r in spec.mix):
        return exchange
    # _input.spec refused checks of HEAD requests: every framer here is a ResponseFramer.
    slots, masks = check_slots(spec.checks, [r.checks for r in spec.mix])
    checks = ResponseChecks(slots)
    return dataclasses.replace(
        exchange, make_framer=checking_framer(checks), checks=checks, check_masks=masks
    )


def _http1_exchange(spec: LoadSpec) -> Exchange:
    connect_host, connect_port = spec.proxy if spec.proxy is not None else (spec.host, spec.port)
    if spec.mix or spec.feeders:
        # _input.spec refused mixes of HEAD with other methods: one framer fits every kind.
        framer_cls = http_proto.framer_for(spec.mix[0].method if spec.mix else spec.method)
        fixed = () if spec.feeders else spec.mix
        return Exchange(
            (),
            0,
            True,
            framer_cls,
            connect_host,
            connect_port,
            framer_cls is http_proto.ResponseFramer,
            tuple(http_proto.render_spec_request(spec, r) for r in fixed),
        )
    data = http_proto.render_spec_request(spec)
    framer_cls = http_proto.framer_for(spec.method)
    parser_framed = framer_cls is http_proto.ResponseFramer
    return Exchange((data,), len(data), True, framer_cls, connect_host, connect_port, parser_framed)


def _h2_exchange(spec: LoadSpec) -> Exchange:
    """An HTTP/2 request: no HTTP/1.1 chunks; its HPACK block, encoded once for every
    stream of every connection of the worker; a mix's kinds each so. With feeders the
    blocks are the requests' own, encoded as they go (``h2_connection``). A gRPC load's
    call: its block and framed message, made once."""
    from pytest_netbench._proto.grpc import encode_unary_block, frame_message
    from pytest_netbench._proto.h2_client import H2Request
    from pytest_netbench._proto.h2_headers import encode_spec_request

    mix = tuple(H2Request(encode_spec_request(spec, kind), kind.body) for kind in spec.mix)
    if spec.grpc_method is not None:
        host = f"[{spec.host}]" if ":" in spec.host else spec.host
        block = encode_unary_block(
            spec.scheme, f"{host}:{spec.port}", spec.grpc_method, spec.headers, spec.grpc_deadline_s
        )
        request = H2Request(block, frame_message(spec.body), grpc=True)
    else:
        request = mix[0] if mix else H2Request(encode_spec_request(spec), spec.body)

    def no_framer(on_response: OnResponse, on_error: OnError) -> Framer:
        raise TypeError("an HTTP/2 load frames with its H2ClientConnection (see h2_connection)")

    return Exchange((), 0, True, no_framer, spec.host, spec.port, h2=request, h2_mix=mix)


def _tcp_exchange(spec: LoadSpec) -> Exchange:
    from pytest_netbench._proto import tcp as tcp_proto

    payload = spec.payload
    chunks = tuple(tcp_proto.chunked(payload, spec.chunk))
    options = tcp_proto.parse_framing(spec.framing)
    make: Callable[[OnResponse, OnError], Framer]
    if options is None:
        # One receive buffer for every connection of the run: each piece is checked as it
        # lands (see EchoFramer), and a run is one thread.
        scratch = bytearray(min(len(payload), _ECHO_SCRATCH_BYTES))

        def make(on_response: OnResponse, on_error: OnError) -> Framer:
            return tcp_proto.EchoFramer(payload, on_response, on_error, scratch)

    else:

        def make(on_response: OnResponse, on_error: OnError) -> Framer:
            return tcp_proto.DelimitedFramer(on_response, on_error, **options)  # type: ignore[arg-type]

    return Exchange(
        chunks, len(payload), False, make, spec.host, spec.port, verified_echo=options is None
    )


def _ws_exchange(spec: LoadSpec) -> Exchange:
    """A message round trip: no fixed chunks (each message gets its own masking key)."""
    from pytest_netbench._proto import websocket as ws_proto
    from pytest_netbench._proto.ws_template import IdTemplate

    host = f"[{spec.host}]" if ":" in spec.host else spec.host
    frames = ws_proto.MessageFrames(spec.payload, text=not spec.binary)
    expected = spec.payload if spec.answer == "echo" else None  # None: any message answers
    ids = None
    if spec.answer == "id":  # the message's id field filled per send (see _proto/ws_ids)
        ids = IdTemplate.from_message(spec.payload.decode("utf-8"), spec.id_field or "id")
    setup = ws_proto.WsSetup(
        f"{host}:{spec.port}", spec.target, spec.subprotocols, spec.headers, expected, frames, ids
    )

    def no_framer(on_response: OnResponse, on_error: OnError) -> Framer:
        raise TypeError("a WebSocket load frames with its WsSetup (see ws_connection)")

    return Exchange((), frames.size, False, no_framer, spec.host, spec.port, websocket=setup)
