"""The sans-IO HTTP/2 client with byte strings only.

Two kinds of peer: the ``h2`` library's server side (an independent implementation, so the
client's bytes are checked by someone else's parser), and frames written by hand for what a
well-behaved server never sends: resets mid-body, GOAWAY with streams in flight, garbage.
"""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
import h2.settings
import hpack
import pytest

from pytest_netbench._proto import h2_frames as f
from pytest_netbench._proto.h2_client import (
    DEFAULT_WINDOW,
    H2ClientConnection,
    H2Request,
    StreamError,
)
from pytest_netbench._proto.h2_headers import (
    ResponseHeaderDecoder,
    encode_rendered_request,
    encode_request_block,
)

BLOCK = encode_request_block("GET", "http", "127.0.0.1:8080", "/")
RESPONSE = [(":status", "200"), ("content-type", "text/plain"), ("content-length", "13")]


class Events:
    """What a client connection reported, in order."""

    def __init__(self) -> None:
        self.responses: list[tuple[int, int]] = []
        self.errors: list[tuple[int, StreamError]] = []

    def client(self, request: H2Request | None = None, **options: int) -> H2ClientConnection:
        return H2ClientConnection(
            request or H2Request(BLOCK),
            lambda stream_id, status: self.responses.append((stream_id, status)),
            lambda stream_id, error: self.errors.append((stream_id, error)),
            **options,
        )


class H2Server:
    """The ``h2`` library's server side, answering every request it completes."""

    def __init__(self, **settings: int) -> None:
        config = h2.config.H2Configuration(client_side=False)
        self.conn = h2.connection.H2Connection(config)
        values = {h2.settings.SettingCodes[name.upper()]: v for name, v in settings.items()}
        self.conn.local_settings = h2.settings.Settings(client=False, initial_values=values)
        self.conn.initiate_connection()
        self.requests: dict[int, list[tuple[bytes, bytes]]] = {}
        self.bodies: dict[int, bytes] = {}
        self.ended: list[int] = []

    def receive(self, data: bytes) -> list[h2.events.Event]:
        events = self.conn.receive_data(data)
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.requests[event.stream_id] = list(event.headers)
            elif isinstance(event, h2.events.DataReceived):
                self.bodies[event.stream_id] = self.bodies.get(event.stream_id, b"") + event.data
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                self.ended.append(event.stream_id)
        return events

    def answer(self, stream_id: int, body: bytes = b"Hello, World!", **extra: object) -> None:
        self.conn.send_headers(stream_id, RESPONSE, end_stream=False)
        self.conn.send_data(stream_id, body, end_stream=not extra.get("trailers"))
        trailers = extra.get("trailers")
        if trailers:
            self.conn.send_headers(stream_id, trailers, end_stream=True)

    def send(self) -> bytes:
        return self.conn.data_to_send()


def connected(events: Events, server: H2Server | None = None, **options: int):
    """A client and an ``h2`` server past both prefaces and SETTINGS ACKs."""
    server = server or H2Server()
    client = events.client(**options)
    server.receive(client.initiate())
    client.feed(server.send())
    server.receive(client.data_to_send())
    client.feed(server.send())
    assert client.settings_acked and not client.failed
    return client, server


def exchange(client: H2ClientConnection, server: H2Server, count: int) -> tuple[int, int]:
    first, opened = client.open_streams(count)
    server.receive(client.data_to_send())
    for stream_id in range(first, first + 2 * opened, 2):
        server.answer(stream_id)
    client.feed(server.send())
    server.receive(client.data_to_send())
    return first, opened


# -- the request --
def test_request_block_is_fixed_and_touches_no_table() -> None:
    assert encode_request_block("GET", "http", "h:1", "/") == encode_request_block(
        "GET", "http", "h:1", "/"
    )
    decoder = hpack.Decoder()
    fields = decoder.decode(encode_request_block("get", "https", "h:1", "/x", [("X-A", "b")]))
    assert fields == [
        (":method", "GET"),
        (":scheme", "https"),
        (":authority", "h:1"),
        (":path", "/x"),
        ("x-a", "b"),
        ("user-agent", "netbench"),
    ]
    assert len(decoder.header_table.dynamic_entries) == 0


def test_host_header_becomes_authority() -> None:
    fields = hpack.Decoder().decode(encode_request_block("GET", "http", "a", "/", [("Host", "b")]))
    assert (":authority", "b") in fields
    assert not any(name == "host" for name, _ in fields)


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ([("Connection", "close")], "connection-specific"),
        ([("Transfer-Encoding", "chunked")], "connection-specific"),
        ([("TE", "gzip")], "only 'trailers'"),
        ([("X-A", "b\r\nc")], "line break"),
    ],
)
def test_request_headers_http2_forbids_are_refused(headers, words) -> None:
    with pytest.raises(ValueError, match=words):
        encode_request_block("GET", "http", "a", "/", headers)


def test_preface_announces_large_windows_and_no_push() -> None:
    client = Events().client()
    data = client.initiate()
    assert data.startswith(f.PREFACE)
    server = H2Server()
    server.receive(data)
    remote = server.conn.remote_settings
    assert remote.initial_window_size == DEFAULT_WINDOW == 2**30 - 1
    assert remote.enable_push == 0
    # The connection window raised to 2^30-1 as well, by a WINDOW_UPDATE on stream 0.
    assert server.conn.outbound_flow_control_window == 2**30 - 1


# -- exchanges with an h2 server --
def test_completes_requests_on_ten_streams() -> None:
    events = Events()
    client, server = connected(events, max_streams=10)
    for _ in range(30):
        _, opened = exchange(client, server, 10)
        assert opened == 10
    assert len(events.responses) == 300 and not events.errors
    assert {status for _, status in events.responses} == {200}
    assert [stream_id for stream_id, _ in events.responses] == list(range(1, 600, 2))
    assert server.requests[1][0] == (b":method", b"GET")
    assert client.open_stream_count == 0


def test_streams_are_bounded_by_max_streams_and_the_servers_setting() -> None:
    events = Events()
    client, server = connected(events, H2Server(max_concurrent_streams=3), max_streams=10)
    assert client.free_streams == 3
    assert client.open_streams(10) == (1, 3)
    assert client.free_streams == 0 and client.open_streams(1) == (0, 0)
    server.receive(client.data_to_send())
    server.answer(3)
    client.feed(server.send())
    assert events.responses == [(3, 200)]
    assert client.free_streams == 1


def test_requests_sent_before_the_servers_settings_arrive() -> None:
    # A server that sends its SETTINGS late: the client writes requests right after its
    # preface, as h2load does, and applies the limits when they come.
    events = Events()
    client = events.client(max_streams=10)
    server = H2Server(max_concurrent_streams=100)
    preface = client.initiate()
    first, opened = client.open_streams(4)
    server.receive(preface + client.data_to_send())
    for stream_id in range(first, first + 2 * opened, 2):
        server.answer(stream_id)
    client.feed(server.send())
    assert [status for _, status in events.responses] == [200] * 4
    assert client.data_to_send().startswith(f.SETTINGS_ACK)


def test_trailers_end_the_stream_with_the_status_of_the_headers() -> None:
    events = Events()
    client, server = connected(events)
    client.open_streams(1)
    server.receive(client.data_to_send())
    server.answer(1, trailers=[("grpc-status", "0")])
    client.feed(server.send())
    assert events.responses == [(1, 200)]


def test_header_block_over_continuation_frames() -> None:
    events = Events()
    client, server = connected(events)
    client.open_streams(1)
    server.receive(client.data_to_send())
    big = [*RESPONSE, ("x-big", "v" * 40_000)]
    server.conn.send_headers(1, big, end_stream=True)
    data = server.send()
    assert data.count(bytes([f.CONTINUATION])) >= 1
    for i in range(0, len(data), 1000):  # in pieces, as reads cut it
        client.feed(data[i : i + 1000])
    assert events.responses == [(1, 200)] and not events.errors


def test_request_body_waits_for_the_servers_small_window() -> None:
    events = Events()
    body = bytes(range(256)) * 4
    client = events.client(H2Request(encode_request_block("POST", "http", "a", "/"), body))
    server = H2Server(initial_window_size=100)
    server.receive(client.initiate())
    client.feed(server.send())  # the server's SETTINGS: stream windows of 100 bytes
    client.open_streams(2)
    for _ in range(40):  # each round the server takes what came and opens its window
        server.receive(client.data_to_send())
        client.feed(server.send())
        if len(server.ended) == 2:
            break
    assert server.bodies == {1: body, 3: body}
    assert server.ended == [1, 3]


def data_frames(sent: bytes) -> list[tuple[int, int, bytes]]:
    """(stream id, flags, payload) of every DATA frame in ``sent``."""
    found, pos = [], 0
    while pos < len(sent):
        length_kind, flags, stream_id = f.FRAME_HEAD.unpack_from(sent, pos)
        payload = sent[pos + 9 : pos + 9 + (length_kind >> 8)]
        if length_kind & 0xFF == f.DATA:
            found.append((stream_id, flags, payload))
        pos += 9 + (length_kind >> 8)
    return found


def test_body_follows_the_initial_window_setting_as_it_changes() -> None:
    events = Events()
    post = H2Request(encode_request_block("POST", "http", "a", "/"), b"0123456789")
    client = events.client(post)
    client.initiate()
    client.feed(server_preface(initial_window_size=0))
    client.open_streams(1)
    assert data_frames(client.data_to_send()) == []  # a window of 0: headers only
    client.feed(server_preface(initial_window_size=4))  # every open stream gains 4
    assert data_frames(client.data_to_send()) == [(1, 0, b"0123")]
    client.feed(f.window_update(1, 100))
    assert data_frames(client.data_to_send()) == [(1, f.END_STREAM, b"456789")]


def test_body_waits_for_the_connection_window() -> None:
    events = Events()
    body = b"x" * 70_000
    client = events.client(H2Request(encode_request_block("POST", "http", "a", "/"), body))
    client.initiate()
    client.feed(server_preface(initial_window_size=2**20, max_frame_size=2**20))
    client.open_streams(1)
    first = data_frames(client.data_to_send())
    assert [len(p) for _, _, p in first] == [65_535]  # the connection's initial window
    client.feed(f.window_update(0, 10_000))
    assert [(s, fl, len(p)) for s, fl, p in data_frames(client.data_to_send())] == [
        (1, f.END_STREAM, 4_465)
    ]


def test_response_before_the_whole_body_cancels_the_rest() -> None:
    events = Events()
    client = events.client(H2Request(encode_request_block("POST", "http", "a", "/"), b"x" * 10))
    client.initiate()
    client.feed(server_preface(initial_window_size=0))
    client.open_streams(1)
    client.data_to_send()
    client.feed(headers(1, end_stream=True, status="413"))
    assert events.responses == [(1, 413)]
    assert client.data_to_send() == f.rst_stream(1, f.CANCEL)


def test_receive_windows_are_given_back_in_batches() -> None:
    events = Events()
    window = 65_535
    client, server = connected(events, stream_window=window, connection_window=window)
    client.open_streams(1)
    server.receive(client.data_to_send())
    server.conn.send_headers(1, RESPONSE)
    chunk = b"x" * 10_000
    updates = []
    for _ in range(6):  # 60,000 bytes: past half of each window once
        server.conn.send_data(1, chunk)
        client.feed(server.send())
        sent = client.data_to_send()
        updates.append(sent)
        server.receive(sent)
    frames = b"".join(updates)
    # One WINDOW_UPDATE for the connection and one for the stream, each of 40,000 bytes.
    assert frames == f.window_update(0, 40_000) + f.window_update(1, 40_000)
    server.conn.send_data(1, b"", end_stream=True)
    client.feed(server.send())
    assert events.responses == [(1, 200)]


def test_ping_is_answered() -> None:
    events = Events()
    client, server = connected(events)
    server.conn.ping(b"12345678")
    client.feed(server.send())
    events_back = server.receive(client.data_to_send())
    assert any(isinstance(e, h2.events.PingAckReceived) for e in events_back)


# -- servers that misbehave, written by hand --
def server_preface(**settings: int) -> bytes:
    return f.settings_frame([(getattr(f, f"SETTINGS_{k.upper()}"), v) for k, v in settings.items()])


def headers(stream_id: int, end_stream: bool = False, status: str = "200") -> bytes:
    block = hpack.Encoder().encode([(":status", status)])
    return f.headers_frames(stream_id, block, end_stream, 16_384)


def started(events: Events, streams: int = 3) -> H2ClientConnection:
    client = events.client()
    client.initiate()
    client.feed(server_preface())
    client.open_streams(streams)
    client.data_to_send()
    return client


def test_rst_stream_mid_body_is_a_reset_with_its_code() -> None:
    events = Events()
    client = started(events, 2)
    client.feed(headers(1) + f.frame(f.DATA, 0, 1, b"half") + f.rst_stream(1, f.INTERNAL_ERROR))
    client.feed(headers(3) + f.frame(f.DATA, f.END_STREAM, 3, b"whole"))
    assert events.responses == [(3, 200)]
    [(stream_id, error)] = events.errors
    assert stream_id == 1
    assert (error.kind, error.cause, error.code) == ("reset", "rst_stream", f.INTERNAL_ERROR)
    assert error.reason == "stream reset by the server: INTERNAL_ERROR (0x2)"
    assert not client.failed and client.free_streams > 0


def test_goaway_fails_the_streams_above_its_last_id_and_lets_the_others_finish() -> None:
    events = Events()
    client = started(events, 3)  # streams 1, 3, 5
    client.feed(headers(1) + f.goaway(3, f.NO_ERROR, b"restarting"))
    [(stream_id, error)] = events.errors
    assert stream_id == 5
    assert (error.kind, error.cause, error.code) == ("reset", "goaway", f.NO_ERROR)
    assert "GOAWAY NO_ERROR (0x0) with last stream 3, saying b'restarting'" in error.reason
    assert client.free_streams == 0 and client.open_streams(1) == (0, 0)
    assert not client.finished
    client.feed(f.frame(f.DATA, f.END_STREAM, 1, b"a") + headers(3, end_stream=True))
    assert events.responses == [(1, 200), (3, 200)]
    assert client.finished


def test_cancel_resets_a_stream_and_drops_its_late_frames() -> None:
    events = Events()
    client = started(events, 2)
    assert client.cancel(1) and not client.cancel(1) and not client.cancel(99)
    assert client.data_to_send() == f.rst_stream(1, f.CANCEL)
    assert client.free_streams == 99
    client.feed(headers(1) + f.frame(f.DATA, f.END_STREAM, 1, b"late") + headers(3, True))
    assert events.responses == [(3, 200)] and not events.errors and not client.failed


def test_close_with_streams_open_ends_them_as_closed() -> None:
    events = Events()
    client = started(events, 2)
    client.feed(headers(1))
    client.feed_eof()
    assert [(s, e.cause, e.kind) for s, e in events.errors] == [
        (1, "closed", "reset"),
        (3, "closed", "reset"),
    ]
    assert "without a GOAWAY" in events.errors[0][1].reason


def test_interim_response_then_final() -> None:
    events = Events()
    client = started(events, 1)
    client.feed(headers(1, status="103") + headers(1, end_stream=True, status="204"))
    assert events.responses == [(1, 204)]


@pytest.mark.parametrize(
    ("frames", "words"),
    [
        (lambda: f.frame(f.DATA, 0, 1, b"x"), "DATA frame before the response's HEADERS"),
        (lambda: headers(1, status="abc"), "no valid :status"),
        (lambda: headers(1) + headers(1), "trailers without END_STREAM"),
        (lambda: headers(1, end_stream=True, status="101"), "interim 101"),
    ],
)
def test_malformed_response_fails_its_stream_only(frames, words) -> None:
    events = Events()
    client = started(events, 2)
    client.feed(frames())
    [(stream_id, error)] = events.errors
    assert stream_id == 1 and error.kind == "protocol" and words in error.reason
    assert client.data_to_send() == f.rst_stream(1, f.PROTOCOL_ERROR)
    assert not client.failed
    client.feed(headers(3, end_stream=True))
    assert events.responses == [(3, 200)]


@pytest.mark.parametrize(
    ("garbage", "code", "words"),
    [
        (b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x", f.PROTOCOL_ERROR, "DATA frame on stream 0"),
        (b"\xff\xff\xff\x00\x00\x00\x00\x00\x01", f.FRAME_SIZE_ERROR, "frame of 16777215 bytes"),
        (f.frame(f.HEADERS, f.END_HEADERS, 1, b"\xff\xff\xff\xff"), f.COMPRESSION_ERROR, "HPACK"),
        (f.frame(f.DATA, 0, 7, b"x"), f.PROTOCOL_ERROR, "stream 7, which was never opened"),
        (f.frame(f.PING, 0, 0, b"short"), f.FRAME_SIZE_ERROR, "PING frame of 5 bytes"),
        (f.frame(f.CONTINUATION, f.END_HEADERS, 1, b""), f.PROTOCOL_ERROR, "CONTINUATION"),
        (f.frame(f.PUSH_PROMISE, 0, 1, b"\x00" * 4), f.PROTOCOL_ERROR, "PUSH_PROMISE"),
        (f.frame(f.SETTINGS, 0, 0, b"\x00\x05\x00\x00\x00\x01"), f.PROTOCOL_ERROR, "MAX_FRAME"),
        (f.frame(f.WINDOW_UPDATE, 0, 0, b"\x00\x00\x00\x00"), f.PROTOCOL_ERROR, "of 0"),
        (headers(1)[:-1] + b"", f.PROTOCOL_ERROR, None),  # cut short: no error yet
    ],
)
def test_garbage_frame_fails_the_connection_and_every_open_stream(garbage, code, words) -> None:
    events = Events()
    client = started(events, 2)
    client.feed(garbage)
    if words is None:
        assert not client.failed and not events.errors
        return
    assert client.failed
    assert client.connection_error is not None and words in client.connection_error.reason
    assert [(s, e.kind, e.code) for s, e in events.errors] == [
        (1, "protocol", code),
        (3, "protocol", code),
    ]
    sent = client.data_to_send()  # a GOAWAY with the code, and the reason as its debug data
    assert sent[3] == f.GOAWAY and f.read_u32(sent, 13) == code and words.encode() in sent
    client.feed(headers(1, end_stream=True))  # nothing more is read
    assert events.responses == [] and len(events.errors) == 2


def test_continuation_interrupted_by_another_frame_is_a_protocol_error() -> None:
    events = Events()
    client = started(events, 1)
    block = hpack.Encoder().encode([(":status", "200")])
    client.feed(f.frame(f.HEADERS, 0, 1, block[:1]) + f.frame(f.DATA, 0, 1, b"x"))
    assert client.failed and "only CONTINUATION frames may come" in events.errors[0][1].reason


def test_an_http1_answer_is_named() -> None:
    events = Events()
    client = started_without_preface(events)
    client.feed(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    assert client.failed
    reason = events.errors[0][1].reason
    assert "answered in HTTP/1 (b'HTTP/1.1 400 Bad Request')" in reason
    assert "does not speak HTTP/2" in reason


def test_first_frame_must_be_settings() -> None:
    events = Events()
    client = started_without_preface(events)
    client.feed(f.ping_ack(b"12345678")[:4])  # fewer than 9 bytes: wait
    assert not client.failed
    client.feed(f.ping_ack(b"12345678")[4:])
    assert client.failed and "first frame is not SETTINGS" in events.errors[0][1].reason


def started_without_preface(events: Events) -> H2ClientConnection:
    client = events.client()
    client.initiate()
    client.open_streams(1)
    client.data_to_send()
    return client


def test_one_byte_at_a_time() -> None:
    events = Events()
    client = events.client()
    client.initiate()
    client.open_streams(2)
    data = (
        server_preface(max_concurrent_streams=5)
        + headers(1)
        + f.frame(f.DATA, f.END_STREAM, 1, b"hi")
        + f.frame(f.PING, 0, 0, b"abcdefgh")
        + headers(3, end_stream=True)
    )
    for i in range(len(data)):
        client.feed(data[i : i + 1])
    assert events.responses == [(1, 200), (3, 200)]
    client.data_to_send()


def test_stream_ids_run_out() -> None:
    events = Events()
    client = started(events, 0)
    client._next_id = f.MAX_STREAM_ID - 2  # two ids left: 2^31-3 and 2^31-1
    assert client.free_streams == 2
    assert client.open_streams(5) == (f.MAX_STREAM_ID - 2, 2)
    assert client.free_streams == 0
    assert client.open_streams(1) == (0, 0)
    assert client._next_id == f.MAX_STREAM_ID + 2


def test_decoder_cache_follows_the_dynamic_table() -> None:
    encoder, decoder = hpack.Encoder(), ResponseHeaderDecoder()
    assert decoder.status_of(encoder.encode([(":status", "299")])) == 299  # into the table
    index_62 = encoder.encode([(":status", "299")])
    assert index_62 == b"\xbe"  # one indexed field: the first dynamic entry
    assert decoder.status_of(index_62) == 299
    assert decoder.status_of(index_62) == 299  # from the cache
    # A new entry shifts every index: the same bytes now name the new field, and the
    # cache must not answer from before.
    assert decoder.status_of(encoder.encode([(":status", "555")])) == 555
    assert decoder.status_of(index_62) == 555


def test_status_that_is_not_three_digits() -> None:
    decoder = ResponseHeaderDecoder()
    assert decoder.status_of(hpack.Encoder().encode([(":status", "20")])) == -1
    assert decoder.status_of(hpack.Encoder().encode([("grpc-status", "0")])) == 0


def test_windows_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match=r"stream_window must be in 65535\.\.2\^31-1"):
        Events().client(stream_window=10)
    with pytest.raises(ValueError, match="max_streams must be at least 1"):
        Events().client(max_streams=0)


def test_a_stream_opens_for_another_request_of_the_load() -> None:
    """A mix's kinds: each stream may carry another prepared request (its block and body);
    the connection's own request is unchanged for the streams after it."""
    events = Events()
    client, server = connected(events, max_streams=2)
    post = H2Request(encode_request_block("POST", "http", "127.0.0.1:8080", "/p"), b"body")
    assert client.open_stream_for(post) == 1
    assert client.open_stream_for(H2Request(BLOCK)) == 3
    assert client.open_stream_for(post) == 0  # max_streams: none may open now
    server.receive(client.data_to_send())
    assert dict(server.requests[1])[b":method"] == b"POST" and server.bodies[1] == b"body"
    assert dict(server.requests[3])[b":path"] == b"/" and 3 not in server.bodies
    server.answer(1)
    server.answer(3)
    client.feed(server.send())
    assert events.responses == [(1, 200), (3, 200)]
    exchange(client, server, 1)
    assert dict(server.requests[5])[b":method"] == b"GET"


def test_a_request_rendered_for_http1_becomes_a_block_and_body() -> None:
    """A request of a load with feeders, from its source's HTTP/1.1 bytes: pseudo-headers
    from the request line and Host, the other fields as lower-case literals (a value over
    126 bytes takes a multi-byte length), the body as it was."""
    long = "v" * 300
    data = (
        "POST /items?id=7 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: netbench\r\n"
        f"X-Long: {long}\r\nContent-Length: 4\r\n\r\nbody"
    ).encode()
    block, body = encode_rendered_request(data, "https")
    assert body == b"body"
    assert hpack.Decoder().decode(block) == [
        (":method", "POST"),
        (":scheme", "https"),
        (":authority", "127.0.0.1:8080"),
        (":path", "/items?id=7"),
        ("user-agent", "netbench"),
        ("x-long", long),
        ("content-length", "4"),
    ]
    with pytest.raises(ValueError, match="'connection' is connection-specific"):
        encode_rendered_request(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", "http")


def test_a_streaming_load_sees_each_data_frame_of_a_stream() -> None:
    events = Events()
    pieces: list[tuple[int, int, bytes]] = []
    server = H2Server()
    client = H2ClientConnection(
        H2Request(BLOCK),
        lambda stream_id, status: events.responses.append((stream_id, status)),
        lambda stream_id, error: events.errors.append((stream_id, error)),
        on_data=lambda stream_id, status, body: pieces.append((stream_id, status, body)),
    )
    server.receive(client.initiate())
    client.feed(server.send())
    server.receive(client.data_to_send())
    client.feed(server.send())
    client.open_streams(1)
    server.receive(client.data_to_send())
    server.conn.send_headers(1, RESPONSE, end_stream=False)
    client.feed(server.send())
    server.conn.send_data(1, b"data: 1\n\n", pad_length=3)
    client.feed(server.send())
    assert events.responses == []
    server.conn.send_data(1, b"data: 2\n\n", end_stream=True)
    client.feed(server.send())
    # The head (its first byte), then each frame's payload without its padding, in order.
    assert pieces == [(1, 200, b""), (1, 200, b"data: 1\n\n"), (1, 200, b"data: 2\n\n")]
    assert events.responses == [(1, 200)]


def test_has_output_says_whether_data_to_send_has_bytes() -> None:
    """The engine skips its write after a read when nothing is queued: a response's
    HEADERS alone ask for no answer; a SETTINGS, a PING or a new stream do."""
    events = Events()
    client = events.client()
    client.initiate()
    assert not client.has_output
    client.feed(server_preface())  # its acknowledgement
    assert client.has_output
    client.data_to_send()
    assert not client.has_output
    client.open_streams(2)
    assert client.has_output and client.data_to_send()
    client.feed(headers(1))
    assert not client.has_output and not events.responses
    client.feed(f.frame(f.DATA, f.END_STREAM, 1, b"hi") + f.ping_ack(b"12345678"))
    assert events.responses == [(1, 200)] and not client.has_output
    client.feed(f.frame(f.PING, 0, 0, b"12345678"))
    assert client.has_output and client.outbound  # the same, without a call
    assert client.data_to_send() == f.ping_ack(b"12345678")
    assert not client.has_output and not client.outbound


def _heads_known(
    events: Events, streams: int, adding: bytes, indexed: bytes
) -> tuple[H2ClientConnection, dict[int, int]]:
    """A client with ``streams`` open whose heads ``heads_at`` times by a counting clock
    (from 100), streams 1 and 3 answered with ``adding`` then ``indexed``: the latter
    decoded once, so a later read of it is known to ``feed``'s shortcut."""
    client = started(events, streams)
    heads: dict[int, int] = {}
    client.heads_at = heads
    client.clock = iter(range(100, 200)).__next__
    client.feed(f.frame(f.HEADERS, f.END_HEADERS, 1, adding))
    client.feed(f.frame(f.HEADERS, f.END_HEADERS, 3, indexed))
    assert indexed in client._known
    return client, heads


def test_a_read_of_one_known_headers_frame_is_what_a_longer_read_makes_of_it() -> None:
    """``feed``'s shortcut for a read that is one response's HEADERS alone (its block
    decoded before, the table unchanged since): the stream waits for its body and
    ``heads_at`` times it by ``clock``, as when the frame comes with others; a frame it
    must not take goes the general way."""
    encoder = hpack.Encoder()
    fields = [(":status", "200"), ("server", "go")]
    adding, indexed = encoder.encode(fields), encoder.encode(fields)
    for lone in (True, False):
        events = Events()
        client, heads = _heads_known(events, 5, adding, indexed)
        for stream_id in (5, 7):
            frame = f.frame(f.HEADERS, f.END_HEADERS, stream_id, indexed)
            client.feed(frame if lone else frame + f.frame(f.PRIORITY, 0, 9, b"\0" * 5))
        assert heads == {1: 100, 3: 101, 5: 102, 7: 103}
        assert events.responses == [] and client.open_stream_count == 5
        client.feed(b"".join(f.frame(f.DATA, f.END_STREAM, s, b"ok") for s in (5, 1, 7, 3)))
        assert events.responses == [(5, 200), (1, 200), (7, 200), (3, 200)]
        assert not events.errors
        # Inside a header block only CONTINUATION may come, known block or not.
        client.feed(f.frame(f.HEADERS, 0, 9, indexed))
        client.feed(f.frame(f.HEADERS, f.END_HEADERS, 11, indexed))
        assert client.failed and "only CONTINUATION frames may come" in events.errors[0][1].reason


def test_a_lone_headers_frame_on_a_stream_never_opened_fails_the_connection() -> None:
    events = Events()
    client = started(events, 2)
    encoder = hpack.Encoder()
    adding = encoder.encode([("server", "go")])  # adds an entry: never kept
    indexed = encoder.encode([(":status", "200"), ("server", "go")])
    client.feed(f.frame(f.HEADERS, f.END_HEADERS | f.END_STREAM, 1, adding + indexed))
    client.feed(f.frame(f.HEADERS, f.END_HEADERS | f.END_STREAM, 3, indexed))
    assert events.responses == [(1, 200), (3, 200)] and indexed in client._known
    client.feed(f.frame(f.HEADERS, f.END_HEADERS, 1, indexed))  # ended: a late frame, dropped
    assert not client.failed
    client.feed(f.frame(f.HEADERS, f.END_HEADERS, 5, indexed))
    assert client.failed and client.connection_error is not None
    assert "never opened" in client.connection_error.reason


def _states_after_each(
    client: H2ClientConnection,
    events: Events,
    reads: list[bytes],
    behind_priority: bool,
    heads: dict[int, int] | None = None,
) -> list[tuple[object, ...]]:
    """What ``client`` makes of each read: the responses ``on_responses`` had, the
    errors, the streams left, the frames queued, the bytes kept, whether it failed and
    ``heads`` (when given). ``behind_priority``: each read that begins at a frame's start
    comes behind a PRIORITY frame, which changes nothing but keeps ``feed``'s shortcuts
    out, so the general path makes the same of it."""
    calls: list[list[tuple[int, int]]] = []
    client.on_responses = lambda ended: calls.append(list(ended))
    states: list[tuple[object, ...]] = []
    for read in reads:
        if behind_priority and not client._recv_buffer:  # (a frame cut short goes on)
            read = f.frame(f.PRIORITY, 0, 99, b"\0" * 5) + read
        client.feed(read)
        states.append(
            (
                list(calls),
                [(s, e.kind, e.reason) for s, e in events.errors],
                sorted(client._streams.items()),
                client.data_to_send(),
                client._recv_buffer,
                client._recv_consumed,
                client.failed,
                dict(heads) if heads is not None else None,
            )
        )
    assert events.responses == []
    return states


def test_a_read_of_data_frames_is_what_a_longer_read_makes_of_it() -> None:
    """``feed``'s shortcut for a read that begins with DATA frames (with ``on_responses``
    set): each last DATA frame of a response whose HEADERS came ends it there, and from the
    first frame that is not one the read goes the general way; what it makes of each read
    is what the general path makes of the same read behind a frame that changes nothing
    (PRIORITY): the responses, the errors, the streams left, the WINDOW_UPDATEs queued, the
    bytes kept for the next read."""

    def data(stream_id: int, end: bool = True, body: bytes = b"x" * 4000) -> bytes:
        return f.frame(f.DATA, f.END_STREAM if end else 0, stream_id, body)

    reads = [
        data(1) + data(3) + data(5),
        data(7, end=False),  # a body in two frames, and two reads
        data(7),
        data(9) + data(11)[:2000],  # the next frame cut short
        data(11)[2000:] + data(13) + headers(15) + data(15),
        data(17),  # its HEADERS not come: the stream fails
        data(19) + data(1),  # a late frame of a stream that ended
        data(21) + f.frame(f.PING, 0, 0, b"short"),  # then one that breaks the connection
    ]
    seen = []
    for lone in (True, False):
        events = Events()
        client = events.client(connection_window=2**16)  # a WINDOW_UPDATE each 32 KiB
        client.initiate()
        client.feed(server_preface())
        client.open_streams(11)
        client.data_to_send()
        client.feed(b"".join(headers(i) for i in range(1, 23, 2) if i not in (15, 17)))
        seen.append(_states_after_each(client, events, reads, behind_priority=not lone))
    assert seen[0] == seen[1]
    calls, errors, *_ = seen[0][-1]
    assert [s for c in calls for s, _ in c] == [1, 3, 5, 7, 9, 11, 13, 15, 19, 21]
    assert errors[0][0] == 17 and seen[0][-1][6]  # failed
    assert any(state[3] for state in seen[0])  # WINDOW_UPDATEs were queued


def test_a_read_of_headers_and_data_frames_is_what_a_longer_read_makes_of_it() -> None:
    """``feed``'s shortcut for a read of several frames, each a final response's known
    HEADERS or the last DATA frame of one whose HEADERS came (Go's reads: 2-3 HEADERS, all
    10 of both): what it makes of each read is what the general path makes of the same read
    behind a PRIORITY frame: the responses, the errors, the streams left, when ``heads_at``
    says each head came (not for a response that came whole in the read), the bytes kept."""
    encoder = hpack.Encoder()
    fields = [(":status", "200"), ("server", "go")]
    adding, indexed = encoder.encode(fields), encoder.encode(fields)

    def head(stream_id: int) -> bytes:
        return f.frame(f.HEADERS, f.END_HEADERS, stream_id, indexed)

    def data(stream_id: int) -> bytes:
        return f.frame(f.DATA, f.END_STREAM, stream_id, b"ok")

    reads = [
        head(5) + head(7),
        head(9) + data(9) + head(11) + data(5),  # 9 came whole in the read
        head(13) + head(15) + data(13) + data(15) + data(7) + data(11),
        head(17) + headers(19, end_stream=True) + head(21),  # then the general way
        head(23) + data(23)[:5],  # cut short
        data(23)[5:] + head(25) + headers(27) + data(21),  # a block not kept: the general way
        head(29) + data(25) + data(27) + head(31),  # 31 never opened: the connection fails
    ]
    seen = []
    for shortcut in (True, False):
        events = Events()
        client, heads = _heads_known(events, 15, adding, indexed)
        seen.append(_states_after_each(client, events, reads, not shortcut, heads))
    assert seen[0] == seen[1]
    calls, errors, *_, heads = seen[0][-1]
    assert [s for c in calls for s, _ in c] == [9, 5, 13, 15, 7, 11, 19, 23, 21, 25, 27]
    assert heads == {
        1: 100,
        3: 101,
        5: 102,
        7: 102,
        11: 103,
        17: 105,
        21: 105,
        23: 106,
        25: 107,
        27: 107,
    }
    assert seen[0][-1][-1] and "never opened" in errors[-1][2]


def test_on_responses_takes_the_responses_a_read_ended_in_one_call() -> None:
    """With ``on_responses`` set, the HTTP responses one read ends, on the hot path or not
    (a body's last DATA, a HEADERS with END_STREAM, trailers), come in one call as
    (stream id, status) pairs in the order they ended, and none to ``on_response``; an error
    goes to ``on_stream_error`` as it comes; responses before a frame that breaks the
    connection are counted before its streams fail."""
    events = Events()
    client = started(events, 5)
    calls: list[list[tuple[int, int]]] = []
    client.on_responses = lambda ended: calls.append(list(ended))
    read = (
        headers(3)
        + headers(1)
        + f.frame(f.DATA, f.END_STREAM, 1, b"ok")
        + headers(5, end_stream=True, status="204")
        + headers(7)
        + f.rst_stream(7, f.CANCEL)
        + headers(9)
        + f.frame(f.DATA, 0, 3, b"body")
        + headers(3, end_stream=True, status="200")  # trailers
    )
    client.feed(read)
    assert calls == [[(1, 200), (5, 204), (3, 200)]] and events.responses == []
    assert [(s, e.cause) for s, e in events.errors] == [(7, "rst_stream")]
    client.feed(f.frame(f.DATA, f.END_STREAM, 9, b"ok") + f.frame(f.PING, 0, 0, b"short"))
    assert calls[1:] == [[(9, 200)]] and client.failed and events.responses == []
