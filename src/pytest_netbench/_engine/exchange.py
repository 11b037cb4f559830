"""What one request/response exchange is: the bytes to write and how to frame the answer.

Built once per run from a :class:`LoadSpec`, so the hot path re-sends pre-rendered bytes
and never formats anything per request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto import http as http_proto
from pytest_netbench._proto import tcp as tcp_proto

OnResponse = Callable[[int, bool], None]
OnError = Callable[[str], None]


class Framer(Protocol):
    failed: bool

    def feed(self, data: bytes) -> None: ...

    def feed_eof(self) -> bool: ...

    @property
    def mid_response(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Exchange:
    """Pre-rendered request chunks plus a framer factory; ``is_http`` picks result rules.

    ``parser_framed``: HTTP whose responses httptools frames alone (every method but HEAD),
    which the closed-loop keep-alive fast path (``fused_http``) relies on.
    """

    chunks: tuple[bytes, ...]
    size: int
    is_http: bool
    make_framer: Callable[[OnResponse, OnError], Framer]
    connect_host: str
    connect_port: int
    parser_framed: bool = False


def build_exchange(spec: LoadSpec) -> Exchange:
    if spec.kind == "http":
        return _http_exchange(spec)
    return _tcp_exchange(spec)


def _http_exchange(spec: LoadSpec) -> Exchange:
    default_port = 443 if spec.scheme == "https" else 80
    host = f"[{spec.host}]" if ":" in spec.host else spec.host
    host_header = host if spec.port == default_port else f"{host}:{spec.port}"
    target = spec.target
    connect_host, connect_port = spec.host, spec.port
    if spec.proxy is not None:
        target = f"{spec.scheme}://{host_header}{spec.target}"
        connect_host, connect_port = spec.proxy
    keepalive = spec.keepalive
    try:
        data = http_proto.render_request(
            spec.method, target, host_header, spec.headers, spec.body, keepalive=keepalive
        )
    except ValueError as exc:
        raise SpecError(f"cannot build the request: {exc}") from None
    framer_cls = http_proto.framer_for(spec.method)
    parser_framed = framer_cls is http_proto.ResponseFramer
    return Exchange((data,), len(data), True, framer_cls, connect_host, connect_port, parser_framed)


def _tcp_exchange(spec: LoadSpec) -> Exchange:
    payload = spec.payload
    if not payload:
        raise SpecError("a TCP load needs a payload of at least one byte")
    chunks = tuple(tcp_proto.chunked(payload, spec.chunk))
    framing = spec.framing
    make: Callable[[OnResponse, OnError], Framer]
    if framing == "echo":

        def make(on_response: OnResponse, on_error: OnError) -> Framer:
            return tcp_proto.EchoFramer(payload, on_response, on_error)

    else:
        kind, _, arg = framing.partition(":")
        if kind not in tcp_proto.FRAMINGS or (kind != "line" and not arg.isdigit()):
            raise SpecError(
                f"unknown framing {framing!r}: use echo, fixed:<bytes>, line, line:<hex delim>"
                " or length-prefixed:<prefix bytes>"
            )
        options: dict[str, int | bytes] = {}
        if kind == "fixed":
            options["size"] = int(arg)
        elif kind == "line":
            options["delimiter"] = bytes.fromhex(arg) if arg else b"\n"
        else:
            options["prefix_bytes"] = int(arg)

        def make(on_response: OnResponse, on_error: OnError) -> Framer:
            return tcp_proto.DelimitedFramer(on_response, on_error, **options)  # type: ignore[arg-type]

    return Exchange(chunks, len(payload), False, make, spec.host, spec.port)
