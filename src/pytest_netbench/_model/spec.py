"""What a load is asked to do: :class:`LoadSpec`, and the :class:`Request` kinds of a mix."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pytest_netbench._model.checks import Check, checks_from
from pytest_netbench._model.feeder_base import Feeder
from pytest_netbench._model.kinds import (
    Arrival,
    HttpProtocol,
    LoopName,
    MixOrder,
    Mode,
    WsAnswer,
)
from pytest_netbench._model.stages import RampProfile, Stage
from pytest_netbench._public import publish


@dataclass(frozen=True, slots=True)
class Request:
    """One kind of request in a mix (``http_load(url, mix=[...])``), as a wrk Lua script
    would send it: ``Request("GET", "/items", name="list")``. Headers go with the load's own
    (a header named here replaces the load's header of that name); ``weight`` is its share
    under ``mix_order="weighted"``. ``name`` keys its figures in ``LoadResult.by_request``
    (default: ``"GET /items"``). The checks are the load's (``http_load`` says what is wrong).
    """

    method: str
    path: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    name: str = ""
    weight: int = 1
    # Checks of this kind's responses, besides the load's (``"body contains ok"``, Check).
    checks: tuple[Check, ...] = ()

    def __post_init__(self) -> None:
        # Accept the forms a user writes (a dict of headers, a str body) as plain values.
        headers: Any = self.headers
        if isinstance(headers, Mapping):
            headers = headers.items()
        object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in headers))
        if isinstance(self.body, str):
            object.__setattr__(self, "body", self.body.encode())
        object.__setattr__(self, "checks", checks_from(self.checks, where="Request checks"))

    @property
    def label(self) -> str:
        """Its name, or method and path when it has none."""
        return self.name or f"{self.method.upper()} {self.path}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.label,
            "method": self.method,
            "path": self.path,
            "headers": [list(h) for h in self.headers],
            "body": len(self.body),
            "weight": self.weight,
        }
        if self.checks:  # a kind's own checks (the load's are the spec's)
            out["checks"] = [c.to_dict() for c in self.checks]
        return out


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """What to send, how hard, and for how long (shared by HTTP, raw TCP and WebSocket)."""

    kind: Literal["http", "echo", "ws"]
    host: str
    port: int
    connections: int = 10
    duration_s: float | None = None
    requests: int | None = None
    rate: float | None = None
    arrival: Arrival = "uniform"
    # Load that changes over time: the rate (open loop) or the connections (closed loop)
    # move from ``rate`` / ``connections`` through each stage's target; ``duration_s`` is
    # the stages' sum (see ``ramp``).
    stages: tuple[Stage, ...] = ()
    max_connections: int | None = None
    keepalive: bool = True
    requests_per_connection: int = 0
    pipeline: int = 1
    warmup_s: float = 0.0
    connect_timeout_s: float = 5.0
    timeout_s: float = 10.0
    workers: int = 1
    # The CPUs the generator's shares run on; (): wherever the OS puts them.
    cpus: tuple[int, ...] = ()
    loop: LoopName = "auto"
    drain: bool = True
    allow_remote: bool = False
    # The span of one timeline row; results of other resolutions merge and store alike.
    timeline_resolution_s: float = 1.0
    # Closed loop: open every connection before the window (at most connect_rate a second).
    connect_first: bool = False
    connect_rate: float | None = None
    # The client-delay probe: every this many seconds one more client connects, makes one
    # exchange and disconnects (see ProbeStats); None: no probe.
    probe_every_s: float | None = None
    # Source addresses the connections are spread over (set by the pre-flight when one
    # address has too few ephemeral ports); empty: the kernel's choice.
    source_addresses: tuple[str, ...] = ()
    # HTTP
    scheme: Literal["http", "https"] = "http"
    method: str = "GET"
    target: str = "/"
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    verify_tls: bool = True
    proxy: tuple[str, int] | None = None
    # Several requests sent in turn (or by weight) instead of method/target/body.
    mix: tuple[Request, ...] = ()
    mix_order: MixOrder = "cycle"
    # Checks of every response (a mix's kinds add their own): k6's check.
    checks: tuple[Check, ...] = ()
    # Named feeders filling the ${name} placeholders of the requests (then templates), in
    # the order given; their random draws are seeded from ``seed``.
    feeders: tuple[tuple[str, Feeder], ...] = ()
    seed: int = 0
    # HTTP/2 (``protocol="h2"``): each connection keeps ``streams`` requests outstanding in
    # closed loop, as h2load's -m; a stream is one request.
    protocol: HttpProtocol = "http1"
    streams: int = 1
    # True when ``protocol`` was chosen by the server's ALPN answer (``protocol="auto"`` over
    # https://, resolved before the load runs, so the engine sees "http1" or "h2").
    protocol_negotiated: bool = False
    # A gRPC unary load (``grpc_load``): its method's path (``/pkg.Service/Method``; the
    # message is ``body``) and its deadline, sent as ``grpc-timeout``.
    grpc_method: str | None = None
    grpc_deadline_s: float | None = None
    # A streaming load: each response read as it arrives, as server-sent events ("sse") or
    # timed reads of the body ("chunks"); a stream is whole with ``stream_events`` events
    # exactly and (or) ends with an event whose data is ``stream_end`` (None: either).
    stream: str | None = None
    stream_events: int | None = None
    stream_end: str | None = None
    # Goodput (vLLM's): the streams that met every SLO of these (metric, ms) pairs, metrics
    # "ttft", "tpot" and "e2el"; () for none.
    goodput: tuple[tuple[str, float], ...] = ()
    # raw TCP; a WebSocket load's message is ``payload`` too
    payload: bytes = b""
    chunk: int = 0
    framing: str = "echo"
    # WebSocket (``target`` and ``headers`` are its handshake's)
    subprotocols: tuple[str, ...] = ()
    binary: bool = False
    answer: WsAnswer = "echo"  # what answers a message: its echo, any next message, by id
    id_field: str | None = None  # answer="id": the JSON field holding a message's id
    # A listen load: connections held, the server's pushes counted (no messages sent), a
    # client ping on each every ``ping_every_s``, a push's send time read from its JSON
    # field ``stamp_field`` or its first 8 bytes (``stamp_binary``).
    listen: bool = False
    ping_every_s: float | None = None
    stamp_field: str | None = None
    stamp_binary: bool = False

    def __repr__(self) -> str:
        # Only the fields of its kind: an HTTP load has no framing, an echo load no method.
        other = _NOT_OF_KIND[self.kind]
        shown = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if f.name not in other
        )
        return f"LoadSpec({shown})"

    @property
    def mode(self) -> Mode:
        return "open" if self.rate is not None else "closed"

    @property
    def pool_limit(self) -> int:
        """The most connections the whole load may hold at once: the fixed count in closed
        loop (a ramp's highest); in open loop the pool grows up to ``max_connections``
        (default: ``connections``, at least 1,024) when the server falls behind."""
        if self.rate is None:
            ramp = self.ramp
            return max(self.connections, round(ramp.peak)) if ramp else self.connections
        return self.max_connections or max(self.connections, 1024)

    @property
    def outstanding_per_connection(self) -> int:
        """Closed loop: the requests a connection keeps outstanding (pipelined HTTP/1.1
        requests, or HTTP/2 streams)."""
        return self.streams if self.protocol == "h2" else self.pipeline

    @property
    def ramp(self) -> RampProfile | None:
        """The target over time of a load with ``stages`` (req/s in open loop, connections in
        closed loop), from the start of its warm-up, which holds the start value; None
        without stages."""
        if not self.stages:
            return None
        start = self.rate if self.rate is not None else float(self.connections)
        return RampProfile(start, self.stages, lead_s=self.warmup_s)

    @property
    def url(self) -> str:
        if self.kind == "echo":
            return f"tcp://{_host_for_url(self.host)}:{self.port}"
        if self.kind == "ws":
            scheme = "wss" if self.scheme == "https" else "ws"
            return f"{scheme}://{_host_for_url(self.host)}:{self.port}{self.target}"
        return f"{self.scheme}://{_host_for_url(self.host)}:{self.port}{self.target}"

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["body"] = len(self.body)
        out["payload"] = len(self.payload)
        out["headers"] = [list(h) for h in self.headers]
        out["mix"] = [r.to_dict() for r in self.mix]
        out["checks"] = [c.to_dict() for c in self.checks]
        out["feeders"] = {name: feeder.to_dict() for name, feeder in self.feeders}
        out["mode"] = self.mode
        out["url"] = self.url
        return out


# The fields that belong to one kind of load (the option table's ``loads`` column says the
# same of the options; a test holds the two together).
_HTTP_ONLY = frozenset(
    {
        "keepalive",
        "requests_per_connection",
        "pipeline",
        "scheme",
        "method",
        "target",
        "headers",
        "body",
        "verify_tls",
        "proxy",
        "mix",
        "mix_order",
        "checks",
        "feeders",
        "seed",
        "protocol",
        "streams",
        "protocol_negotiated",
        "grpc_method",
        "grpc_deadline_s",
        "stream",
        "stream_events",
        "stream_end",
        "goodput",
    }
)
_ECHO_ONLY = frozenset({"payload", "chunk", "framing"})
_WS_ONLY = frozenset(
    {
        "subprotocols",
        "binary",
        "answer",
        "id_field",
        "listen",
        "ping_every_s",
        "stamp_field",
        "stamp_binary",
    }
)
_NOT_OF_KIND = {
    "http": _ECHO_ONLY | _WS_ONLY,
    "echo": _HTTP_ONLY | _WS_ONLY,
    # A WebSocket load's handshake has a target and headers, over TLS (wss) as https's;
    # its message is the payload; answers matched by id may be pipelined.
    "ws": (_HTTP_ONLY - {"target", "headers", "scheme", "verify_tls", "pipeline"})
    | {"chunk", "framing", "stages"},
}


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host


publish(globals())
