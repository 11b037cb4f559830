"""gRPC unary calls on the sans-IO HTTP/2 client, with byte strings only: the request's
fields and message, and every way a call ends (the server side is the ``h2`` library)."""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import hpack
import pytest

from pytest_netbench._model.grpc_status import status_name
from pytest_netbench._proto.grpc import encode_unary_block, format_timeout, frame_message
from pytest_netbench._proto.h2_client import H2ClientConnection, H2Request, StreamError

METHOD = "/echo.Echo/Say"
OK_HEADERS = [(":status", "200"), ("content-type", "application/grpc")]


class Call:
    """One client connection making gRPC calls to an ``h2`` server."""

    def __init__(self) -> None:
        self.responses: list[tuple[int, int]] = []
        self.errors: list[tuple[int, StreamError]] = []
        request = H2Request(
            encode_unary_block("http", "127.0.0.1:50051", METHOD, timeout=2.5),
            frame_message(b"hello"),
            grpc=True,
        )
        self.client = H2ClientConnection(
            request,
            lambda stream_id, status: self.responses.append((stream_id, status)),
            lambda stream_id, error: self.errors.append((stream_id, error)),
        )
        self.server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        self.server.initiate_connection()
        self.requests: list[h2.events.Event] = []
        self.server.receive_data(self.client.initiate())
        self.client.feed(self.server.data_to_send())

    def start(self) -> int:
        first, _ = self.client.open_streams(1)
        self.requests += self.server.receive_data(self.client.data_to_send())
        return first

    def answer(self) -> None:
        self.client.feed(self.server.data_to_send())


def test_the_request_is_a_grpc_unary_call() -> None:
    call = Call()
    stream_id = call.start()
    [received] = [e for e in call.requests if isinstance(e, h2.events.RequestReceived)]
    headers = dict(received.headers)
    assert headers[b":method"] == b"POST" and headers[b":path"] == METHOD.encode()
    assert headers[b"content-type"] == b"application/grpc"
    assert headers[b"te"] == b"trailers" and headers[b"grpc-timeout"] == b"2500000u"
    [data] = [e for e in call.requests if isinstance(e, h2.events.DataReceived)]
    assert data.stream_id == stream_id and data.data == b"\x00\x00\x00\x00\x05hello"
    assert any(isinstance(e, h2.events.StreamEnded) for e in call.requests)


def test_grpc_status_0_is_ok() -> None:
    call = Call()
    stream_id = call.start()
    call.server.send_headers(stream_id, OK_HEADERS)
    call.server.send_data(stream_id, frame_message(b"hello"))
    call.server.send_headers(stream_id, [("grpc-status", "0")], end_stream=True)
    call.answer()
    assert call.responses == [(stream_id, 200)] and not call.errors


def test_grpc_status_in_the_trailers_is_a_status_error_with_its_message() -> None:
    call = Call()
    stream_id = call.start()
    call.server.send_headers(stream_id, OK_HEADERS)
    trailers = [("grpc-status", "5"), ("grpc-message", "no%20such%20user")]
    call.server.send_headers(stream_id, trailers, end_stream=True)
    call.answer()
    [(failed, error)] = call.errors
    assert failed == stream_id and not call.responses
    assert (error.kind, error.cause, error.code) == ("status", "grpc_status", 5)
    assert error.reason == "grpc-status NOT_FOUND (5): no such user"


def test_trailers_only_answer() -> None:
    call = Call()
    stream_id = call.start()
    call.server.send_headers(stream_id, [*OK_HEADERS, ("grpc-status", "12")], end_stream=True)
    call.answer()
    assert [(s, e.code, e.reason) for s, e in call.errors] == [
        (stream_id, 12, "grpc-status UNIMPLEMENTED (12)")
    ]


def test_a_call_ended_without_grpc_status_is_a_protocol_error() -> None:
    call = Call()
    stream_id = call.start()
    call.server.send_headers(stream_id, OK_HEADERS)
    call.server.send_data(stream_id, frame_message(b"hello"), end_stream=True)
    call.answer()
    [(_, error)] = call.errors
    assert error.kind == "protocol" and "no grpc-status" in error.reason


def test_an_http_error_status_is_a_response() -> None:
    call = Call()
    stream_id = call.start()
    call.server.send_headers(stream_id, [(":status", "503")], end_stream=True)
    call.answer()
    assert call.responses == [(stream_id, 503)] and not call.errors


def test_many_calls_read_cached_trailers() -> None:
    call = Call()
    for _ in range(20):
        stream_id = call.start()
        call.server.send_headers(stream_id, OK_HEADERS)
        call.server.send_data(stream_id, frame_message(b"x"))
        call.server.send_headers(stream_id, [("grpc-status", "0")], end_stream=True)
        call.answer()
    assert len(call.responses) == 20 and not call.errors


def test_timeout_format() -> None:
    assert format_timeout(2.5) == "2500000u"
    assert format_timeout(1e-9) == "1n"
    assert format_timeout(86_400) == "86400000m"
    assert format_timeout(1e6) == "1000000S"
    assert format_timeout(1e9) == "16666667M"
    with pytest.raises(ValueError, match="positive seconds"):
        format_timeout(0)


def test_bad_method_names_say_what_a_method_is() -> None:
    with pytest.raises(ValueError, match=r"'/package.Service/Method'"):
        encode_unary_block("http", "a", "echo.Echo/Say")
    block = encode_unary_block("http", "a", METHOD, [("x-key", "v")])
    assert ("x-key", "v") in hpack.Decoder().decode(block)


def test_status_names() -> None:
    assert status_name(4) == "DEADLINE_EXCEEDED (4)"
    assert status_name(99) == "unknown code (99)"
