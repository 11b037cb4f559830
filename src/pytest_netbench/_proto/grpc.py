"""gRPC over HTTP/2, the client's side of a unary call (gRPC's PROTOCOL-HTTP2.md): the
request's header fields, its length-prefixed message and the ``grpc-timeout`` format (the
status codes' names are ``_model.grpc_status``'s, which the reports share).

A unary call is one HTTP/2 request: HEADERS (``POST``, ``:path /pkg.Service/Method``,
``content-type: application/grpc``, ``te: trailers``) and one DATA frame holding the
message behind a 5-byte prefix (a compressed flag and a 32-bit length). The answer's status
is ``grpc-status`` in its trailers (or in its only HEADERS, a "trailers-only" answer);
``h2_client`` reads it when the request is made with ``grpc=True``:

    H2Request(encode_unary_block("http", "127.0.0.1:50051", "/echo.Echo/Say"),
              frame_message(b"hello"), grpc=True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pytest_netbench._proto.h2_headers import encode_request_block

_METHOD = re.compile(r"^/[A-Za-z_][\w.]*/[A-Za-z_]\w*$")
# grpc-timeout: at most 8 digits and a unit, the finest unit that fits (gRPC's spec).
_TIMEOUT_UNITS = (("n", 1e9), ("u", 1e6), ("m", 1e3), ("S", 1.0), ("M", 1 / 60), ("H", 1 / 3600))
_MAX_MESSAGE = 2**32 - 1


def frame_message(message: bytes) -> bytes:
    """One uncompressed message behind its 5-byte prefix."""
    if len(message) > _MAX_MESSAGE:
        raise ValueError(f"a gRPC message holds at most 2^32-1 bytes, got {len(message)}")
    return b"\x00" + len(message).to_bytes(4, "big") + message


def format_timeout(seconds: float) -> str:
    """``seconds`` as a ``grpc-timeout`` value: the finest unit whose count fits 8 digits."""
    if not 0 < seconds < math.inf:
        raise ValueError(f"a gRPC deadline must be positive seconds, got {seconds!r}")
    for unit, per_second in _TIMEOUT_UNITS:
        count = seconds * per_second  # compared before round(): 1e300 s in ns is inf
        if count < 99_999_999.5:
            return f"{max(round(count), 1)}{unit}"
    raise ValueError(f"a gRPC deadline of {seconds!r} s is beyond 99,999,999 hours")


def encode_unary_block(
    scheme: str,
    authority: str,
    method: str,
    headers: Sequence[tuple[str, str]] = (),
    timeout: float | None = None,
) -> bytes:
    """The header block of a unary call to ``method`` (``/package.Service/Method``):
    encoded once, valid on every stream as ``h2_headers.encode_request_block``'s."""
    if not _METHOD.match(method):
        raise ValueError(
            f"a gRPC method is '/package.Service/Method', got {method!r}: "
            "the service's full name, a slash, and the method's name"
        )
    own = [("content-type", "application/grpc"), ("te", "trailers")]
    if timeout is not None:
        own.append(("grpc-timeout", format_timeout(timeout)))
    names = {name.lower() for name, _ in own}
    fields = own + [(n, v) for n, v in headers if n.lower() not in names]
    return encode_request_block("POST", scheme, authority, method, fields)
