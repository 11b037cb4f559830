"""What one request/response exchange is: the bytes to write and how to frame the answer.

Built once per run from a :class:`LoadSpec`, so the hot path re-sends pre-rendered bytes
and never formats anything per request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_netbench._model import LoadSpec
from pytest_netbench._proto import http as http_proto
from pytest_netbench._proto import tcp as tcp_proto
from pytest_netbench._proto.framing import Framer, OnError, OnResponse
from pytest_netbench._proto.source import mix_sequence


@dataclass(frozen=True, slots=True)
class Exchange:
    """Pre-rendered request chunks plus a framer factory; ``is_http`` picks result rules.

    ``parser_framed``: HTTP whose responses httptools frames alone (every method but HEAD),
    which the closed-loop keep-alive fast path (``fused_http``) relies on.

    ``verified_echo``: raw TCP whose answer is the payload itself, checked byte for byte
    (the ``echo`` framing), which the asyncio engine receives in place (``echo_connection``).

    A request mix has no ``chunks``: ``mix_requests`` holds each kind's bytes, and
    ``mix_sequence`` one period of the order they go out in (indexes into it), which every
    connection of the worker takes its next request from in turn.
    """

    chunks: tuple[bytes, ...]
    size: int
    is_http: bool
    make_framer: Callable[[OnResponse, OnError], Framer]
    connect_host: str
    connect_port: int
    parser_framed: bool = False
    mix_requests: tuple[bytes, ...] = ()
    mix_sequence: tuple[int, ...] = ()
    verified_echo: bool = False


# The most one read of an echo takes (uvloop reads up to 256 KiB at a time itself).
_ECHO_SCRATCH_BYTES = 256 * 1024


def build_exchange(spec: LoadSpec) -> Exchange:
    """The exchange a checked spec describes (``_spec`` has already refused bad input)."""
    if spec.kind == "http":
        return _http_exchange(spec)
    return _tcp_exchange(spec)


def _http_exchange(spec: LoadSpec) -> Exchange:
    connect_host, connect_port = spec.proxy if spec.proxy is not None else (spec.host, spec.port)
    if spec.mix:
        # _spec refused mixes of HEAD with other methods: one framer fits every kind.
        framer_cls = http_proto.framer_for(spec.mix[0].method)
        return Exchange(
            (),
            0,
            True,
            framer_cls,
            connect_host,
            connect_port,
            framer_cls is http_proto.ResponseFramer,
            tuple(http_proto.render_spec_request(spec, r) for r in spec.mix),
            mix_sequence(spec),
        )
    data = http_proto.render_spec_request(spec)
    framer_cls = http_proto.framer_for(spec.method)
    parser_framed = framer_cls is http_proto.ResponseFramer
    return Exchange((data,), len(data), True, framer_cls, connect_host, connect_port, parser_framed)


def _tcp_exchange(spec: LoadSpec) -> Exchange:
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
