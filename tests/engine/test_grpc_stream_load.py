"""gRPC server streaming (``grpc_load(..., stream="grpc")``) against the catalog's grpcio
server, on asyncio, uvloop and trio: each call's messages read as its DATA frames come,
in the stream figures' one vocabulary (a message is an event).

``/netbench.Echo/Stream`` takes ``N,F,G``: N messages, the first F ms after the call
arrived, then one every G ms, each at its due time from the arrival. The counts are
exact; the first message's p50 is held within 3 ms of F and the gap's p50 within 1 ms of
G (grpcio's handler is a Python thread sleeping to each due time beside the load on a
busy 2-core machine: a neighbour's burst can throw a run off, so up to five are run and
the first that lands must meet every bound, as ``test_stream_load`` does). A stream's
worst case (max) is left free.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_netbench import LoadResult, SpecError, ToolchainMissing, grpc_load
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server

METHOD = "/netbench.Echo/Stream"
F_MS, G_MS, N = 40, 10, 12
FIRST_TOLERANCE_MS = 3.0


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


def _within(attempts: int, check: Callable[[], None]) -> None:
    for attempt in range(attempts):
        try:
            check()
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise


def _stream(url: str, loop: str, message: bytes, **options: object) -> LoadResult:
    options.setdefault("requests", 12)
    options.setdefault("connections", 1)
    options.setdefault("streams", 2)
    options.setdefault("timeout", 5.0)
    return grpc_load(url, METHOD, message, stream="grpc", loop=loop, **options)  # type: ignore[arg-type]


def test_messages_first_message_and_gaps_by_the_servers_timings(
    grpc_url: str, loop: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    def check() -> None:
        r = consistent(_stream(grpc_url, loop, f"{N},{F_MS},{G_MS}".encode(), stream_events=N))
        assert (r.sent, r.ok, r.errors_total) == (12, 12, 0), r.error_samples
        assert r.status_codes == {0: 12}
        s = r.stream
        assert s is not None and s.mode == "grpc"
        assert (s.streams, s.events) == (12, 12 * N)
        assert (s.events_per_stream.min, s.events_per_stream.max) == (N, N)
        assert s.first_event.count == 12 and s.gap.count == 12 * (N - 1)
        assert s.first_byte.p50_ms <= s.first_event.p50_ms
        assert abs(s.first_event.p50_ms - F_MS) <= FIRST_TOLERANCE_MS, s.first_event
        assert abs(s.gap.p50_ms - G_MS) <= 1.0, s.gap
        # The whole call: the first message, N - 1 gaps, then its trailers.
        assert abs(r.p50_ms - (F_MS + (N - 1) * G_MS)) <= FIRST_TOLERANCE_MS + 2.0, r.latency

    _within(5, check)


def test_a_wrong_count_of_messages_is_a_verify_error(grpc_url: str, loop: str) -> None:
    r = _stream(grpc_url, loop, b"3,0,2", stream_events=4, requests=4)
    assert (r.ok, r.errors.get("verify")) == (0, 4), r.errors
    assert r.error_samples["verify"] == "expected 4 events, got 3"
    assert r.stream is not None and r.stream.events == 12


def test_a_call_that_fails_after_its_messages_keeps_them(grpc_url: str, loop: str) -> None:
    # Three messages, then grpc-status ABORTED in the trailers: a status error by its code,
    # its messages still counted in the stream figures.
    r = _stream(grpc_url, loop, b"3,0,2,abort", requests=4)
    assert (r.ok, r.errors.get("status")) == (0, 4), r.errors
    assert r.status_codes == {10: 4}
    assert r.error_samples["status"] == "grpc-status ABORTED (10): aborted after 3 messages"
    s = r.stream
    assert s is not None and (s.streams, s.events, s.gap.count) == (4, 12, 8)


def test_a_stream_past_the_timeout_is_a_timeout_with_its_messages_kept(
    grpc_url: str, loop: str
) -> None:
    # 100 messages 20 ms apart: the 0.3 s timeout (checked every so often) cuts each call
    # after some 15 of them, far from its 100.
    r = _stream(grpc_url, loop, b"100,0,20", requests=2, timeout=0.3)
    assert (r.ok, r.errors.get("timeout")) == (0, 2), r.errors
    assert "the stream had not ended after" in r.error_samples["timeout"]
    s = r.stream
    assert s is not None and s.streams == 2 and 2 * 5 <= s.events <= 2 * 40


def test_goodput_counts_the_calls_whose_first_message_met_the_slo(grpc_url: str, loop: str) -> None:
    # First message at 40 ms: every call meets a TTFT bound of 200 ms, none one of 10 ms.
    met = _stream(grpc_url, loop, b"3,40,5", requests=4, goodput="ttft:200 e2el:1000")
    missed = _stream(grpc_url, loop, b"3,40,5", requests=4, goodput={"ttft": 10})
    assert met.stream is not None and met.stream.good_streams == 4
    assert missed.stream is not None and missed.stream.good_streams == 0
    assert missed.stream.goodput == 0.0 and met.stream.goodput > 0


def test_unary_calls_read_as_a_stream_of_one(grpc_url: str, loop: str) -> None:
    r = grpc_load(
        grpc_url, "/netbench.Echo/Say", b"hi", stream="grpc", stream_events=1, requests=6,
        loop=loop,  # type: ignore[arg-type]
    )  # fmt: skip
    assert (r.ok, r.errors_total) == (6, 0), r.error_samples
    assert r.stream is not None and (r.stream.events, r.stream.gap.count) == (6, 0)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"stream": "sse"}, "a gRPC load's stream is 'grpc'"),
        ({"stream": "grpc", "stream_end": "[DONE]"}, "drop stream_end"),
        ({"stream_events": 3}, "pass stream='grpc'"),
        ({"stream": "grpc", "stream_events": -1}, "stream_events must be a whole number"),
    ],
)
def test_bad_stream_options_are_refused(options: dict[str, object], words: str) -> None:
    with pytest.raises(SpecError, match=words):
        grpc_load("http://127.0.0.1:1", METHOD, b"1,0,0", **options)  # type: ignore[arg-type]


def test_an_http_load_refuses_the_grpc_mode() -> None:
    from pytest_netbench import http_load

    with pytest.raises(SpecError, match="reads a gRPC server-streaming call"):
        http_load("http://127.0.0.1:1/", stream="grpc")


PROTO = Path(__file__).parent / "grpc_greeter" / "greeter.proto"


def test_a_server_streaming_methods_json_message_is_typed_by_its_proto() -> None:
    pytest.importorskip("grpc_tools.protoc")
    from pytest_netbench import grpc_message_from_json

    data = '{"name": "netbench", "times": 3}'
    unary = grpc_message_from_json("/greet.Greeter/SayHello", data, proto=PROTO)
    streaming = grpc_message_from_json(
        "/greet.Greeter/Watch", data, proto=PROTO, server_streaming=True
    )
    assert streaming == unary  # the same HelloRequest
    with pytest.raises(SpecError, match="load it with stream='grpc'"):
        grpc_message_from_json("/greet.Greeter/Watch", data, proto=PROTO)


def test_netbench_grpc_stream_takes_a_json_message(grpc_url: str, tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools.protoc")
    # The catalog's server has no greet.Greeter: each call is UNIMPLEMENTED (12), which
    # proves the command typed the message, sent the calls and read their status.
    out = tmp_path / "r.json"
    command = [
        sys.executable, "-m", "pytest_netbench.cli", "grpc", grpc_url, "--method",
        "/greet.Greeter/Watch", "--proto", str(PROTO), "--data", '{"name": "x"}',
        "--stream", "grpc", "-n", "4", "-c", "1", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert out.exists(), done.stderr
    result = json.loads(out.read_text())
    assert result["status_codes"] == {"12": 4} and result["stream"]["mode"] == "grpc"
