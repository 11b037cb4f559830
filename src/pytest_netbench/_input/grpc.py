"""The spec of a gRPC unary load: an HTTP/2 load whose every stream is one call.

A call is an HTTP/2 request (``POST`` to the method's path, the message behind gRPC's
5-byte prefix, ``grpc-timeout`` for a deadline), so a gRPC load is an HTTP load with
``protocol="h2"`` and every HTTP load option keeps its meaning (``connections``,
``streams``, ``rate``, ``duration``, ``workers``, ...). What is gRPC's own is checked
here: the method's name, the message, the deadline, and the HTTP options a call fixes
itself (its method, path and body), which are refused rather than ignored.

A server-streaming method is loaded with ``stream="grpc"``: each call's messages are read
as they arrive, each an *event* of the stream figures (``LoadResult.stream``: first event,
gaps, events a call), and ``stream_events=N`` makes a call whole with N messages exactly.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol, Unpack

from pytest_netbench._errors import SpecError
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._input.spec import http_spec
from pytest_netbench._input.streams import checked_goodput
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto.grpc import encode_unary_block, format_timeout
from pytest_netbench._public import publish


class SupportsSerialize(Protocol):
    """A protobuf message (anything with ``SerializeToString()``)."""

    def SerializeToString(self) -> bytes: ...


# HTTP options a unary call sets itself: what to pass instead.
_FIXED_BY_THE_CALL = {
    "method": (
        "the gRPC method is the second argument, positionally: "
        "grpc_load(url, '/package.Service/Method', message) (its HTTP method is always POST)"
    ),
    "body": "the call's message is message=",
    "mix": "one method per gRPC load (run one load per method)",
    "feeders": "a gRPC load sends one message",
    "pipeline": "calls run concurrently as HTTP/2 streams: use streams=",
}


def grpc_spec(
    url: str,
    method: str,
    /,
    message: bytes | SupportsSerialize = b"",
    *,
    deadline: float | None = None,
    **options: Unpack[HttpOptions],
) -> LoadSpec:
    """Check and build the :class:`LoadSpec` of a gRPC unary load: calls to ``method``
    (``/package.Service/Method``) at the server ``url`` names (``http://`` for cleartext
    HTTP/2, ``https://`` for TLS), each sending ``message`` (the serialized request, or a
    protobuf message, serialized once here), each with ``deadline`` seconds (``grpc-timeout``) when
    given. ``options``: the HTTP load options (``connections``, ``streams``, ``rate``,
    ``duration``, ``requests``, ``headers``, ...). ``url`` and ``method`` are positional:
    ``method=`` is the HTTP options' verb, which a call fixes to POST."""
    for name, why in _FIXED_BY_THE_CALL.items():
        if name in options:
            raise SpecError(f"a gRPC load takes no {name}=: {why}")
    protocol = options.pop("protocol", "h2")
    if protocol != "h2":
        raise SpecError(f"a gRPC load speaks HTTP/2, got protocol={protocol!r}: leave protocol out")
    serialize = getattr(message, "SerializeToString", None)
    if callable(serialize):  # a protobuf message: its wire form
        message = serialize()
    if not isinstance(message, bytes | bytearray | memoryview):
        raise SpecError(
            f"message= is the call's serialized bytes or a protobuf message, got"
            f" {type(message).__name__}: pass bytes (e.g. a message's SerializeToString())"
        )
    if deadline is not None:
        if not isinstance(deadline, int | float) or not math.isfinite(deadline) or deadline <= 0:
            raise SpecError(f"deadline= is positive seconds, got {deadline!r}")
        try:
            format_timeout(deadline)
        except ValueError as exc:  # beyond what grpc-timeout can say
            raise SpecError(f"deadline= {exc}") from None
    try:
        encode_unary_block("http", "localhost", method)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    goodput = checked_goodput(options.pop("goodput", None), options.get("stream"))
    stream, events = _checked_grpc_stream(options)
    http_options: HttpOptions = {**options, "protocol": "h2", "method": "POST"}
    http_options["body"] = bytes(message)
    spec = http_spec(url, **http_options)
    return dataclasses.replace(
        spec,
        target=method,
        grpc_method=method,
        grpc_deadline_s=deadline,
        stream=stream,
        stream_events=events,
        goodput=goodput,
    )


def _checked_grpc_stream(options: HttpOptions) -> tuple[str | None, int | None]:
    """A server-streaming load's ``stream`` and ``stream_events``, taken out of ``options``
    (None, None for a unary load); a SpecError says what is wrong."""
    stream = options.pop("stream", None)
    events = options.pop("stream_events", None)
    end = options.pop("stream_end", None)
    if end is not None:
        raise SpecError(
            "a gRPC stream ends with its trailers, not an end marker: drop stream_end"
            " (stream_events=N checks the messages)"
        )
    if stream is None:
        if events is not None:
            raise SpecError("stream_events counts a server stream's messages: pass stream='grpc'")
        return None, None
    if stream != "grpc":
        raise SpecError(
            f"a gRPC load's stream is 'grpc' (each message of a server-streaming call an"
            f" event), got {stream!r}"
        )
    if events is not None and (
        isinstance(events, bool) or not isinstance(events, int) or events < 0
    ):
        raise SpecError(f"stream_events must be a whole number >= 0, got {events!r}")
    return "grpc", events


publish(globals())
