"""The words of the model: error kinds, modes, loops, why a result is invalid, and the
percentiles every summary holds."""

from __future__ import annotations

from typing import Literal

# "truncated": a stream (``stream=``) whose connection closed after its head and before its
# end; its events are kept in ``LoadResult.stream``.
ErrorKind = Literal["connect", "reset", "timeout", "protocol", "status", "verify", "truncated"]
ERROR_KINDS: tuple[ErrorKind, ...] = (
    "connect",
    "reset",
    "timeout",
    "protocol",
    "status",
    "verify",
    "truncated",
)

Mode = Literal["closed", "open"]
Arrival = Literal["uniform", "poisson"]
ARRIVALS: tuple[Arrival, ...] = ("uniform", "poisson")
LoopName = Literal["auto", "uvloop", "asyncio", "trio"]
LOOPS: tuple[LoopName, ...] = ("auto", "uvloop", "asyncio", "trio")
# How a request mix picks the next request: each in turn, or interleaved by weight.
MixOrder = Literal["cycle", "weighted"]
MIX_ORDERS: tuple[MixOrder, ...] = ("cycle", "weighted")
# What answers a WebSocket message: its echo (checked), or whatever message comes next.
WsAnswer = Literal["echo", "any", "id"]
WS_ANSWERS: tuple[WsAnswer, ...] = ("echo", "any", "id")
# The HTTP version a load speaks: HTTP/1.1, HTTP/2 (prior knowledge on http://, ALPN h2 on
# https://), or "auto": over https:// whichever the server picks of ALPN's h2 and http/1.1,
# chosen once before the load runs; over http:// HTTP/1.1, as curl and browsers without
# prior knowledge.
HttpProtocol = Literal["http1", "h2", "auto"]
HTTP_PROTOCOLS: tuple[HttpProtocol, ...] = ("http1", "h2", "auto")

# Why a result cannot be trusted, one kind per entry of ``invalid_reasons`` (whose text is
# for people; these are for code, e.g. the experiment layer deciding whether to retry).
InvalidCause = Literal[
    "worker_lost",
    "connections_not_opened",
    "generator_fds",
    "generator_saturated",
    "rate_not_achieved",
    "schedule_lag",
    "server_died",
    "host_contention",
    "unknown",
]
INVALID_CAUSES: tuple[InvalidCause, ...] = (
    "worker_lost",
    "connections_not_opened",
    "generator_fds",
    "generator_saturated",
    "rate_not_achieved",
    "schedule_lag",
    "server_died",
    "host_contention",
    "unknown",
)
# Causes outside the server, in the generator or the host they share (a neighbour took
# the server's CPU): running the same load again may well give a valid result, and a
# search never counts them against the server. "rate_not_achieved" is not one: the pool
# filled up because the server held the requests.
GENERATOR_CAUSES: frozenset[str] = frozenset(
    {"generator_fds", "generator_saturated", "schedule_lag", "host_contention"}
)
# How results stored before causes existed are read: the first words of each reason.
_CAUSE_OF_REASON: tuple[tuple[str, InvalidCause], ...] = (
    ("connections not opened", "connections_not_opened"),
    ("worker lost", "worker_lost"),
    ("generator ran out of file descriptors", "generator_fds"),
    ("generator saturated", "generator_saturated"),
    ("rate not achieved", "rate_not_achieved"),
    ("generator fell behind its schedule", "schedule_lag"),
    ("server died", "server_died"),
    ("host contention", "host_contention"),
)

# A timeline row ends "inside" the window if it ends at most this much after it (the tick
# and the deadline fire at the same instant, a little apart).

PERCENTILE_FIELDS: tuple[tuple[str, float], ...] = (
    ("p50_ms", 50.0),
    ("p75_ms", 75.0),
    ("p90_ms", 90.0),
    ("p95_ms", 95.0),
    ("p99_ms", 99.0),
    ("p999_ms", 99.9),
)


def cause_of_reason(reason: str) -> InvalidCause:
    """The cause behind a reason's text, for results stored before causes were recorded."""
    for opening, cause in _CAUSE_OF_REASON:
        if reason.startswith(opening):
            return cause
    return "unknown"
