"""gRPC unary loads (``grpc_load``) against the catalog's grpcio server, over real sockets.

``/netbench.Echo/Say`` echoes, ``Fail`` aborts with NOT_FOUND, ``Sleep`` answers after the
milliseconds its message spells (so a deadline is exceeded on purpose). Counts are exact on
asyncio, uvloop and trio; ``status_codes`` counts grpc-status codes; every result keeps
``sent == ok + errors_total + in_flight``, a call counting as one request.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netbench import SpecError, ToolchainMissing, grpc_load, grpc_spec
from pytest_netbench._model import LoadResult
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

HOST = "127.0.0.1"
LOOPS = ["asyncio", "uvloop", "trio"]


def consistent(r: LoadResult) -> LoadResult:
    assert r.sent == r.ok + r.errors_total + r.in_flight, r
    return r


def errors(r: LoadResult) -> dict[str, int]:
    return {kind: count for kind, count in r.errors.items() if count}


@pytest.fixture(scope="module")
def grpc_url() -> Iterator[str]:
    try:
        spec = catalog.get("grpcio", app="grpc")
    except ToolchainMissing as exc:
        pytest.skip(f"grpcio cannot run here: {exc}")
    server = Server.from_spec(spec)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.mark.parametrize("loop", LOOPS)
def test_ok_calls_are_counted_under_grpc_status_0(grpc_url: str, loop: str) -> None:
    r = consistent(
        grpc_load(
            grpc_url,
            "/netbench.Echo/Say",
            b"hello",
            connections=2,
            streams=5,
            requests=400,
            loop=loop,  # type: ignore[arg-type]
        )
    )
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (400, 400, 0, 0)
    assert r.status_codes == {0: 400}
    assert r.generator.protocol == "h2" and r.generator.loop == loop
    assert r.p99_ms > 0


@pytest.mark.parametrize("loop", LOOPS)
def test_grpc_status_errors_are_counted_by_code(grpc_url: str, loop: str) -> None:
    r = consistent(
        grpc_load(
            grpc_url,
            "/netbench.Echo/Fail",
            connections=2,
            streams=5,
            requests=100,
            loop=loop,  # type: ignore[arg-type]
        )
    )
    assert (r.sent, r.ok, r.in_flight) == (100, 0, 0)
    assert errors(r) == {"status": 100}
    assert r.status_codes == {5: 100}
    assert r.error_samples["status"] == "grpc-status NOT_FOUND (5): no such thing"


@pytest.mark.parametrize("loop", LOOPS)
def test_a_deadline_exceeded_is_counted_as_code_4(grpc_url: str, loop: str) -> None:
    # Each call asks for 300 ms of sleep with a 50 ms deadline: the server ends every one
    # with DEADLINE_EXCEEDED, well before the client's own timeout.
    r = consistent(
        grpc_load(
            grpc_url,
            "/netbench.Echo/Sleep",
            b"300",
            deadline=0.05,
            connections=1,
            streams=4,
            requests=12,
            timeout=30,
            loop=loop,  # type: ignore[arg-type]
        )
    )
    assert (r.sent, r.ok, r.in_flight) == (12, 0, 0)
    assert errors(r) == {"status": 12}
    assert r.status_codes == {4: 12}
    assert r.error_samples["status"].startswith("grpc-status DEADLINE_EXCEEDED (4)")


@pytest.mark.parametrize("loop", LOOPS)
def test_the_clients_own_timeout_stays_a_timeout(grpc_url: str, loop: str) -> None:
    # No deadline sent: the server would answer after 500 ms; the client gives up first.
    r = consistent(
        grpc_load(
            grpc_url, "/netbench.Echo/Sleep", b"500", timeout=0.1, connections=1, streams=4,
            requests=4, loop=loop,  # type: ignore[arg-type]
        )
    )  # fmt: skip
    assert (r.sent, r.ok, r.in_flight) == (4, 0, 0)
    assert errors(r) == {"timeout": 4} and r.status_codes == {}


def test_a_deadline_met_leaves_calls_ok(grpc_url: str) -> None:
    r = consistent(
        grpc_load(grpc_url, "/netbench.Echo/Sleep", b"0", deadline=30, streams=4, requests=20)
    )
    assert (r.sent, r.ok, r.errors_total) == (20, 20, 0)
    assert r.status_codes == {0: 20}


class FakeProto:
    """Stands for a protobuf message: grpc_load serializes it once."""

    def SerializeToString(self) -> bytes:
        return b"\x0a\x02hi"


def test_a_protobuf_message_over_two_workers(grpc_url: str) -> None:
    spec = grpc_spec(grpc_url, "/netbench.Echo/Say", FakeProto())
    assert spec.body == b"\x0a\x02hi"
    r = consistent(
        grpc_load(grpc_url, "/netbench.Echo/Say", FakeProto(), workers=2, connections=2,
                  streams=3, requests=60)
    )  # fmt: skip
    assert (r.sent, r.ok, r.errors_total) == (60, 60, 0) and r.status_codes == {0: 60}


def test_an_unknown_method_is_unimplemented(grpc_url: str) -> None:
    r = consistent(grpc_load(grpc_url, "/netbench.Echo/Nope", streams=2, requests=10))
    assert r.status_codes == {12: 10} and errors(r) == {"status": 10}


@pytest.mark.parametrize("loop", LOOPS)
def test_open_loop_calls(grpc_url: str, loop: str) -> None:
    r = consistent(
        grpc_load(
            grpc_url, "/netbench.Echo/Say", b"x", rate=200, duration=0.5, streams=4,
            loop=loop,  # type: ignore[arg-type]
        )
    )  # fmt: skip
    assert r.mode == "open" and r.ok > 0 and r.errors_total == 0
    assert set(r.status_codes) == {0}


# -- the spec, sending nothing --
def test_the_spec_is_an_h2_post_to_the_method() -> None:
    spec = grpc_spec("http://127.0.0.1:50051", "/pkg.Svc/Get", b"\x08\x01", deadline=0.25)
    assert (spec.protocol, spec.method, spec.target, spec.body) == (
        "h2",
        "POST",
        "/pkg.Svc/Get",
        b"\x08\x01",
    )
    assert (spec.grpc_method, spec.grpc_deadline_s) == ("/pkg.Svc/Get", 0.25)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rpc": "Get"}, "a gRPC method is '/package.Service/Method', got 'Get'"),
        ({"method": "GET"}, "a gRPC load takes no method=: the gRPC method is the second"),
        ({"body": b"x"}, "a gRPC load takes no body=: the call's message is message="),
        ({"protocol": "http1"}, "a gRPC load speaks HTTP/2, got protocol='http1'"),
        ({"deadline": 0}, "deadline= is positive seconds, got 0"),
        (
            {"message": "text"},
            "message= is the call's serialized bytes or a protobuf message, got str",
        ),
    ],
)
def test_the_spec_refuses_what_a_call_cannot_be(kwargs: dict[str, object], message: str) -> None:
    rpc = str(kwargs.pop("rpc", "/pkg.Svc/Get"))
    with pytest.raises(SpecError) as caught:
        grpc_spec("http://127.0.0.1:50051", rpc, **kwargs)  # type: ignore[arg-type]
    assert message in str(caught.value)


# -- netbench grpc --
def test_the_command_counts_calls_by_grpc_status(
    grpc_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from pytest_netbench.cli import main

    message = tmp_path / "sleep.bin"
    message.write_bytes(b"300")
    argv = ["grpc", grpc_url, "--method", "/netbench.Echo/Sleep", "--message-file", str(message)]
    code = main([*argv, "--deadline", "0.05", "-n", "8", "--streams", "4", "-c", "1"])
    out = capsys.readouterr().out
    assert code == 8  # nothing succeeded
    assert "Target: gRPC /netbench.Echo/Sleep at http://127.0.0.1:" in out
    assert "grpc-status: DEADLINE_EXCEEDED (4): 8" in out
    argv = ["grpc", grpc_url, "--method", "/netbench.Echo/Say", "--message-hex", "6869"]
    assert main([*argv, "-n", "50", "--streams", "5", "-c", "2"]) == 0
    assert "grpc-status: OK (0): 50" in capsys.readouterr().out


def test_the_command_refuses_a_message_that_is_not_hex(grpc_url: str) -> None:
    from pytest_netbench.cli import main

    argv = ["grpc", grpc_url, "--method", "/netbench.Echo/Say", "--message-hex", "zz", "-n", "1"]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
