"""The loops agree: the same load against the same deterministic server gives the same
figures on asyncio, uvloop and trio (issue 34's differential harness).

Each shape is a load and a server whose answers depend only on what it is sent, never on
time (faults at set counts: every Nth request answered 503 or malformed, every Nth
connection reset, closed or stalled; fixed bodies and framings): a request budget, not a
duration, so what is sent does not depend on speed either. Each loop gets a fresh server.
The figures compared are those the load's shape fixes: sent, ok, errors by kind, in
flight, status codes, each kind of a mix, connections opened (where the count does not
depend on timing: not an open loop's keep-alive pool, which grows when answers are slow),
the feeders' end, a flow's sessions, and the error the load raised, if any. A difference
fails naming the load and the figure, with each loop's value.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from h2_servers import H2App, H2Options
from servers import HOST, EchoApp, EchoOptions, Handler, HttpApp, HttpOptions, ServerThread
from shop_app import ShopApp
from shop_flows import browser, shopper
from ws_servers import WsApp, WsOptions

from pytest_netbench import (
    LoadResult,
    NetbenchError,
    Request,
    echo_load,
    feeders,
    flow,
    http_load,
    ws_load,
)

LOOPS = ("asyncio", "uvloop", "trio")
Check = Callable[[LoadResult], LoadResult]
N = 60  # requests (messages, exchanges) of every load with a budget
ROWS = 25  # rows of the feeders' files: fewer than N

Run = Callable[[ServerThread, str, Path], LoadResult]


@dataclass(frozen=True)
class Shape:
    """A load (``run(server, loop, tmp_path)``) against a fresh ``app()`` per loop."""

    app: Callable[[], Handler]
    run: Run
    # Figures left out: those this shape's timing may move (see the module doc).
    skip: frozenset[str] = field(default_factory=frozenset)
    raises: str = ""  # the name of the error every loop must raise, if any
    tls: bool = False  # served over TLS (a self-signed certificate: verify_tls=False)


def budget(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with a budget of ``N`` requests, unless they say otherwise (``None``:
    no budget, for a ramp whose stages hold the requests)."""
    arguments = {"requests": N, **options}
    if arguments["requests"] is None:
        del arguments["requests"]
    if arguments.pop("tls", False):
        arguments["verify_tls"] = False
    return arguments


def http(
    app: Callable[[], Handler] | None = None, skip: tuple[str, ...] = (), **options: Any
) -> Shape:
    """An HTTP/1.1 load of ``N`` requests (unless ``options`` say otherwise)."""

    def run(server: ServerThread, loop: str, tmp_path: Path) -> LoadResult:
        return http_load(server.url + "/", loop=loop, **budget(options))

    return Shape(app or HttpApp, run, frozenset(skip), tls=bool(options.get("tls")))


def served(**options: Any) -> Callable[[], Handler]:
    return lambda: HttpApp(HttpOptions(**options))


def h2(status_every: int = 0, skip: tuple[str, ...] = (), **options: Any) -> Shape:
    """An HTTP/2 load of ``N`` requests against the ``h2`` library's server."""
    app = lambda: H2App(H2Options(status_every=status_every))  # noqa: E731
    return http(app, skip, protocol="h2", **options)


def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.csv"
    path.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(ROWS)))
    return path


def fed(on_end: str, skip: tuple[str, ...] = (), h2_server: bool = False, **options: Any) -> Shape:
    """A load whose every request takes a row of a ``ROWS``-row CSV file."""

    def run(server: ServerThread, loop: str, tmp_path: Path) -> LoadResult:
        rows = {"row": feeders.csv(rows_file(tmp_path), on_end=on_end)}
        arguments = budget(options)
        if arguments.pop("mixed", False):
            mix = [
                Request("GET", "/a/${row.id}", name="a"),
                Request("POST", "/b", body="${row.name}", name="b"),
            ]
            return http_load(server.url, mix=mix, feeders=rows, loop=loop, **arguments)
        return http_load(server.url + "/item/${row.id}", feeders=rows, loop=loop, **arguments)

    app: Callable[[], Handler] = H2App if h2_server else HttpApp
    return Shape(app, run, frozenset(skip))


MIX = [
    Request("GET", "/a", name="a"),
    Request("POST", "/b", body="x" * 50, name="b"),
    Request("GET", "/c", name="c"),
]
WEIGHTED = [Request("GET", "/a", name="a", weight=3), *MIX[1:]]


def ws(skip: tuple[str, ...] = (), server: dict[str, Any] | None = None, **options: Any) -> Shape:
    def run(srv: ServerThread, loop: str, tmp_path: Path) -> LoadResult:
        scheme = "wss" if options.get("tls") else "ws"
        return ws_load(f"{scheme}://{HOST}:{srv.port}/echo", loop=loop, **budget(options))

    app = lambda: WsApp(WsOptions(**(server or {})))  # noqa: E731
    return Shape(app, run, frozenset(skip), tls=bool(options.get("tls")))


def echo(server: dict[str, Any] | None = None, skip: tuple[str, ...] = (), **options: Any) -> Shape:
    def run(srv: ServerThread, loop: str, tmp_path: Path) -> LoadResult:
        return echo_load(HOST, srv.port, loop=loop, **budget(options))

    return Shape(lambda: EchoApp(EchoOptions(**(server or {}))), run, frozenset(skip))


def flows(function: Any, skip: tuple[str, ...] = (), **options: Any) -> Shape:
    def run(server: ServerThread, loop: str, tmp_path: Path) -> LoadResult:
        return flow(function, server.url, loop=loop, **options)

    return Shape(ShopApp, run, frozenset(skip))


def unreachable(**options: Any) -> Shape:
    def run(server: ServerThread, loop: str, tmp_path: Path) -> LoadResult:
        with socket.socket() as sock:  # a port nothing listens on
            sock.bind((HOST, 0))
            port = sock.getsockname()[1]
        return http_load(f"http://{HOST}:{port}/", loop=loop, **budget(options))

    return Shape(HttpApp, run, raises="TargetUnreachableError")


# An open loop's keep-alive pool (a flow's users, in the open model) grows when answers
# are slow: its size moves with the machine.
POOL = ("connections_opened",)

SHAPES: dict[str, Shape] = {
    # Closed loop, HTTP/1.1.
    "keep-alive-1": http(connections=1),
    "keep-alive-4": http(connections=4),
    "no-keep-alive-1": http(connections=1, keepalive=False),
    "no-keep-alive-3": http(connections=3, keepalive=False),
    "per-connection-3": http(connections=1, requests_per_connection=3),
    "pipelined-4x2": http(connections=2, pipeline=4),
    "head": http(connections=2, method="HEAD"),
    "post-body": http(connections=2, method="POST", body="x" * 300),
    "chunked": http(served(framing="chunked"), connections=2),
    "close-delimited": http(served(framing="close"), connections=2),
    "connection-close": http(served(framing="connection-close"), connections=2),
    "http10": http(served(framing="http10"), connections=2),
    "split-reads": http(served(split_at=10), connections=2),
    "large-body": http(served(body_size=100_000), connections=2, requests=20),
    "slow-server": http(served(delay_ms=3), connections=3),
    "status-every-5": http(served(status_every=5), connections=3),
    "status-every-5-no-keep-alive": http(served(status_every=5), connections=2, keepalive=False),
    "status-every-4-pipelined": http(served(status_every=4), connections=1, pipeline=3),
    "malformed-every-7": http(served(malformed_every=7), connections=1),
    "reset-every-4": http(served(reset_every=4), connections=2, keepalive=False),
    "close-every-4": http(served(close_every=4), connections=2, keepalive=False),
    "stall-every-10": http(
        served(stall_every=10), connections=2, keepalive=False, requests=20, timeout=1.0
    ),
    "status-every-3-per-connection-4": http(
        served(status_every=3), connections=1, requests_per_connection=4
    ),
    "two-workers": http(connections=4, workers=2),
    "tls": http(connections=2, tls=True),
    "tls-no-keep-alive": http(connections=2, keepalive=False, tls=True),
    # Open loop, HTTP/1.1.
    "open": http(rate=500.0, connections=2, skip=POOL),
    "open-no-keep-alive": http(rate=500.0, connections=2, keepalive=False),
    "open-status-every-4": http(served(status_every=4), rate=500.0, connections=2, skip=POOL),
    "open-reset-every-5": http(served(reset_every=5), rate=500.0, keepalive=False),
    "open-per-connection-2": http(rate=500.0, requests_per_connection=2, skip=POOL),
    "open-two-workers-no-keep-alive": http(rate=500.0, keepalive=False, workers=2),
    "open-tls": http(rate=500.0, connections=2, tls=True, skip=POOL),
    # Open-loop ramps: the stages' integral (100.5 and 50.25 requests) holds the requests,
    # none due at the deadline itself.
    "open-ramp": http(rate=0, stages=[("1s", 201)], requests=None, skip=POOL),
    "open-ramp-flat-no-keep-alive": http(
        rate=100.5, stages=[("0.5s", 100.5)], keepalive=False, requests=None
    ),
    # Request mixes.
    "mix-cycle": http(mix=MIX, connections=1),
    "mix-weighted": http(mix=WEIGHTED, mix_order="weighted", connections=3),
    "mix-status-every-4": http(served(status_every=4), mix=MIX, connections=1),
    "mix-no-keep-alive": http(mix=MIX, connections=2, keepalive=False),
    "mix-open": http(mix=MIX, rate=500.0, connections=2, skip=POOL),
    "mix-pipelined": http(mix=MIX, connections=2, pipeline=3),
    "mix-h2-status-every-4": h2(mix=MIX, connections=1, streams=1, status_every=4),
    # Feeders, each end.
    "feeders-stop": fed("stop", connections=2),
    "feeders-stop-1": fed("stop", connections=1),
    "feeders-stop-mix": fed("stop", connections=1, mixed=True),
    "feeders-stop-no-keep-alive": fed("stop", connections=2, keepalive=False),
    "feeders-stop-open": fed("stop", rate=500.0, connections=2, skip=POOL),
    "feeders-wrap": fed("wrap", connections=2),
    "feeders-wrap-mix": fed("wrap", connections=2, mixed=True),
    "feeders-stop-per-connection-3": fed("stop", connections=1, requests_per_connection=3),
    "feeders-stop-pipelined": fed("stop", connections=2, pipeline=4),
    "feeders-wrap-no-keep-alive": fed("wrap", connections=2, keepalive=False),
    "feeders-wrap-open": fed("wrap", rate=500.0, connections=2, mixed=True, skip=POOL),
    "feeders-error": replace(fed("error", connections=2), raises="FeederExhausted"),
    "feeders-stop-two-workers": fed("stop", connections=2, workers=2),
    # HTTP/2.
    "h2": h2(connections=1, streams=4),
    "h2-2x8": h2(connections=2, streams=8),
    "h2-status-every-5": h2(connections=1, streams=4, status_every=5),
    "h2-mix": h2(connections=1, streams=4, mix=MIX),
    "h2-open": h2(connections=1, streams=4, rate=500.0, skip=POOL),
    "h2-feeders-stop": fed("stop", h2_server=True, protocol="h2", connections=1, streams=4),
    "h2-open-status-every-3": h2(connections=1, streams=4, rate=500.0, status_every=3, skip=POOL),
    "h2-feeders-wrap-mix": fed(
        "wrap", h2_server=True, protocol="h2", connections=2, streams=4, mixed=True
    ),
    # WebSocket round trips.
    "ws": ws(connections=2),
    "ws-fragmented": ws(server={"fragment": True}, connections=2),
    "ws-pings": ws(server={"ping_every": 5}, connections=2),
    "ws-close-every-10": ws(server={"close_every": 10}, connections=1),
    "ws-refused": ws(server={"refuse": 403}, connections=2),
    "ws-open": ws(rate=500.0, connections=2, skip=POOL),
    "ws-tls": ws(connections=2, tls=True),
    "ws-by-id-reversed": ws(
        server={"id_field": "ref", "reverse": 3},
        answer="id",
        id_field="ref",
        message='{"op": "get", "key": "k1"}',
        pipeline=3,
        connections=2,
    ),
    "ws-wrong-id-every-10": ws(server={"id_field": "id", "wrong_id_every": 10}, answer="id"),
    "ws-corrupt-every-10": ws(server={"corrupt_every": 10}, connections=1),
    "ws-stall-every-15": ws(server={"stall_every": 15}, connections=1, requests=30, timeout=1.0),
    "ws-ack-as-any": ws(server={"reply": b'{"ack": true}'}, answer="any", connections=2),
    "ws-ack-as-echo": ws(server={"reply": b'{"ack": true}'}, connections=2),
    # Echo over raw TCP.
    "echo": echo(connections=2),
    "echo-corrupt-every-7": echo(
        server={"corrupt_every": 7, "payload_size": 64}, payload=b"x" * 64, connections=1
    ),
    "echo-open": echo(rate=500.0, connections=2, skip=POOL),
    "echo-mute-first": echo(
        server={"mute_first": 1, "payload_size": 16}, payload=b"y" * 16, timeout=1.0
    ),
    "echo-chunked-writes": echo(payload=b"z" * 200, chunk=64, connections=2),
    # User flows.
    "flow-shopper": flows(shopper, users=3, sessions=12),
    "flow-browser": flows(browser, users=2, sessions=20),
    "flow-shopper-lean": flows(shopper, users=2, sessions=10, client="lean"),
    "flow-open": flows(shopper, rate=100.0, sessions=10, skip=POOL),  # users as needed
    # Nothing listening.
    "unreachable": unreachable(connections=2),
    "unreachable-open": unreachable(rate=200.0),
}


def figures(result: LoadResult) -> dict[str, object]:
    """What a load found that its shape fixes, whatever loop ran it."""
    out: dict[str, object] = {
        "sent": result.sent,
        "ok": result.ok,
        "errors": {kind: n for kind, n in result.errors.items() if n},
        "in_flight": result.in_flight,
        "status_codes": dict(result.status_codes),
        "connections_opened": result.generator.connections_opened,
        "feeders_ran_out": result.generator.feeders_ran_out,
        "interrupted": result.interrupted,
        "by_request": {
            name: (kind.sent, kind.ok, {k: n for k, n in kind.errors.items() if n})
            for name, kind in result.by_request.items()
        },
    }
    if result.sessions is not None:
        s = result.sessions
        out["sessions"] = (s.started, s.completed, s.failed, s.in_progress)
    return out


def outcome(
    shape: Shape, loop: str, tmp_path: Path, consistent: Check, tls: ssl.SSLContext
) -> dict[str, object]:
    """The shape's figures on ``loop`` (or the kind of error it raised), from a fresh
    server."""
    tmp_path.mkdir()
    with ServerThread(shape.app(), ssl_context=tls if shape.tls else None) as server:
        try:
            result = shape.run(server, loop, tmp_path)
        except NetbenchError as exc:
            return {"raised": type(exc).__name__}
    consistent(result)
    found = figures(result)
    return {name: value for name, value in found.items() if name not in shape.skip}


@pytest.mark.parametrize("name", SHAPES)
def test_every_loop_finds_the_same(
    name: str, tmp_path: Path, consistent: Check, tls_context: ssl.SSLContext
) -> None:
    shape = SHAPES[name]
    found = {loop: outcome(shape, loop, tmp_path / loop, consistent, tls_context) for loop in LOOPS}
    first, *others = LOOPS
    assert found[first].get("raised", "") == shape.raises, found[first]
    differences = [
        f"{figure}: " + ", ".join(f"{loop}={found[loop].get(figure)!r}" for loop in LOOPS)
        for figure in found[first].keys() | {k for loop in others for k in found[loop]}
        if any(found[loop].get(figure) != found[first].get(figure) for loop in others)
    ]
    assert not differences, f"load {name!r} differs across loops:\n" + "\n".join(differences)
