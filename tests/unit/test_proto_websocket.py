"""The sans-IO WebSocket layer with byte strings only: handshake, masking, framing."""

from __future__ import annotations

import pytest

from pytest_netbench._proto import websocket as ws
from pytest_netbench._proto.tcp import OK, VERIFY_FAILED

PAYLOAD = b"hello websocket"


class Events:
    """What a framer reported, in order."""

    def __init__(self) -> None:
        self.responses: list[int] = []
        self.errors: list[str] = []
        self.replies: list[bytes] = []
        self.closes: list[tuple[int, str]] = []

    def framer(
        self, payload: bytes = PAYLOAD, *, text: bool = True, any_answer: bool = False
    ) -> ws.WsFramer:
        frames = ws.MessageFrames(payload, text=text)
        return ws.WsFramer(
            frames,
            None if any_answer else payload,
            lambda code, keep_alive: self.responses.append(code),
            self.errors.append,
            self.replies.append,
            lambda code, reason: self.closes.append((code, reason)),
        )


def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    return ws.frame_header(opcode, len(payload), masked=False, fin=fin) + payload


def unmask_client_frame(frame: bytes) -> tuple[int, bytes]:
    """A client frame's opcode and payload, checking it is masked."""
    assert frame[1] & 0x80, "client frames must be masked"
    length = frame[1] & 0x7F
    offset = 2
    if length == 126:
        length, offset = int.from_bytes(frame[2:4], "big"), 4
    elif length == 127:
        length, offset = int.from_bytes(frame[2:10], "big"), 10
    key = frame[offset : offset + 4]
    body = frame[offset + 4 :]
    assert len(body) == length
    return frame[0] & 0x0F, ws.mask(body, key)


# -- the handshake --
def test_accept_matches_rfc_example() -> None:
    # RFC 6455 section 1.3's worked example.
    assert ws.accept_for("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def accepted_answer(key: str, *extra: str) -> bytes:
    lines = [
        "HTTP/1.1 101 Switching Protocols",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Accept: {ws.accept_for(key)}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_handshake_request_carries_key_subprotocols_and_headers() -> None:
    hs = ws.ClientHandshake("h:1", "/chat", ["v2", "v1"], [("Authorization", "Bearer x")])
    text = hs.request.decode()
    assert text.startswith("GET /chat HTTP/1.1\r\nHost: h:1\r\n")
    assert f"Sec-WebSocket-Key: {hs.key}\r\n" in text
    assert "Sec-WebSocket-Version: 13\r\n" in text
    assert "Sec-WebSocket-Protocol: v2, v1\r\n" in text
    assert text.endswith("Authorization: Bearer x\r\n\r\n")


def test_handshake_accepted_in_pieces_keeps_the_bytes_after_it() -> None:
    hs = ws.ClientHandshake("h", "/", ["v1", "v2"])
    answer = accepted_answer(hs.key, "Sec-WebSocket-Protocol: v2") + b"\x81\x02hi"
    assert hs.receive(answer[:20]) is None
    accepted = hs.receive(answer[20:])
    assert accepted == ws.Accepted("v2", b"\x81\x02hi")


def test_handshake_refused_names_the_status_line() -> None:
    hs = ws.ClientHandshake("h", "/")
    with pytest.raises(ws.HandshakeRefused) as caught:
        hs.receive(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
    assert caught.value.status == 403
    assert "HTTP/1.1 403 Forbidden" in str(caught.value)


@pytest.mark.parametrize(
    ("extra", "accept", "words"),
    [
        ((), "wrong", "Sec-WebSocket-Accept"),
        (("Sec-WebSocket-Protocol: v9",), None, "did not offer"),
        (("Sec-WebSocket-Extensions: permessage-deflate",), None, "extensions"),
    ],
)
def test_a_101_that_breaks_the_rules_is_invalid(
    extra: tuple[str, ...], accept: str | None, words: str
) -> None:
    hs = ws.ClientHandshake("h", "/", ["v1"])
    answer = accepted_answer(hs.key, *extra)
    if accept is not None:
        answer = answer.replace(ws.accept_for(hs.key).encode(), accept.encode())
    with pytest.raises(ws.HandshakeInvalid, match=words):
        hs.receive(answer)


def test_garbage_instead_of_an_answer_is_invalid() -> None:
    with pytest.raises(ws.HandshakeInvalid, match="not HTTP"):
        ws.ClientHandshake("h", "/").receive(b"SSH-2.0-OpenSSH\r\n\r\n")
    with pytest.raises(ws.HandshakeInvalid, match="no end"):
        ws.ClientHandshake("h", "/").receive(b"x" * 20_000)


# -- frames out --
@pytest.mark.parametrize("size", [0, 1, 5, 125, 126, 65_535, 65_536, 70_001])
def test_messages_are_masked_with_a_fresh_key_and_unmask_to_the_payload(size: int) -> None:
    payload = bytes(i % 251 for i in range(size))
    frames = ws.MessageFrames(payload, text=False)
    first, second = frames.render(0x01020304), frames.render(0xA0B0C0D0)
    assert first != second or size == 0
    for frame in (first, second, frames.next_frame()):
        assert len(frame) == frames.size
        assert frame[0] == 0x80 | ws.BINARY
        assert unmask_client_frame(frame) == (ws.BINARY, payload)
    assert frames.echo == server_frame(ws.BINARY, payload)


def test_mask_is_its_own_inverse() -> None:
    key = b"\x12\x34\x56\x78"
    assert ws.mask(ws.mask(PAYLOAD, key), key) == PAYLOAD
    assert ws.mask(b"\x00\x00\x00\x00\x00", key) == key + key[:1]


# -- frames in --
def test_a_whole_echo_and_a_split_one_are_ok() -> None:
    events = Events()
    framer = events.framer()
    echo = server_frame(ws.TEXT, PAYLOAD)
    framer.feed(echo)
    for byte in echo:
        framer.feed(bytes([byte]))
    framer.feed(echo + echo)
    assert events.responses == [OK] * 4
    assert not events.errors


def test_fragmented_message_with_a_ping_between_is_reassembled_and_the_ping_answered() -> None:
    events = Events()
    framer = events.framer()
    framer.feed(
        server_frame(ws.TEXT, PAYLOAD[:5], fin=False)
        + server_frame(ws.PING, b"are you there")
        + server_frame(ws.CONTINUATION, PAYLOAD[5:9], fin=False)
        + server_frame(ws.PONG, b"")
        + server_frame(ws.CONTINUATION, PAYLOAD[9:])
    )
    assert events.responses == [OK]
    [pong] = events.replies
    assert unmask_client_frame(pong) == (ws.PONG, b"are you there")


def test_an_echo_that_differs_fails_verification() -> None:
    events = Events()
    events.framer().feed(server_frame(ws.TEXT, PAYLOAD.upper()))
    assert events.responses == [VERIFY_FAILED]


def test_with_any_answer_every_message_counts_as_the_answer() -> None:
    events = Events()
    framer = events.framer(any_answer=True)
    framer.feed(server_frame(ws.TEXT, b'{"ack": 1}') + server_frame(ws.BINARY, b""))
    framer.feed(server_frame(ws.TEXT, PAYLOAD))
    assert events.responses == [OK, OK, OK]


def test_a_close_is_reported_with_its_code_and_answered() -> None:
    events = Events()
    framer = events.framer()
    framer.feed(server_frame(ws.CLOSE, ws.close_payload(1011, "oops")) + b"ignored")
    assert events.closes == [(1011, "oops")]
    assert unmask_client_frame(events.replies[0]) == (ws.CLOSE, b"\x03\xf3")
    assert framer.closed and not events.errors
    assert ws.describe_close(1011, "oops") == "code 1011 (internal error): 'oops'"


def test_a_close_without_a_code_is_no_status_received() -> None:
    events = Events()
    events.framer().feed(server_frame(ws.CLOSE, b""))
    assert events.closes == [(ws.NO_STATUS, "")]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"\x81\x85abcd" + b"hello", "masked"),
        (b"\xc1\x02hi", "reserved bits"),
        (b"\x83\x02hi", "unknown opcode 0x3"),
        (b"\x80\x02hi", "no fragmented message"),
        (b"\x01\x02hi\x81\x02hi", "inside a fragmented message"),
        (b"\x09\x02hi", "fragmented or oversized control"),
        (b"\x88\x01\x03", "1-byte payload"),
        (b"\x82\x7f\x80" + bytes(7), "most significant bit"),
        (b"\x82\x7f" + (2**40).to_bytes(8, "big"), "more than"),
    ],
)
def test_corrupt_frames_are_protocol_errors(data: bytes, words: str) -> None:
    events = Events()
    framer = events.framer()
    framer.feed(data)
    framer.feed(server_frame(ws.TEXT, PAYLOAD))  # nothing after a failure counts
    assert len(events.errors) == 1 and words in events.errors[0]
    assert framer.failed and events.responses == []


# -- the client's close at the end of a load --
def test_close_from_client_sends_1000_then_waits_for_the_servers_close() -> None:
    events = Events()
    framer = events.framer()
    ended: list[str] = []
    frame = framer.close_from_client(lambda: ended.append("closed"))
    assert unmask_client_frame(frame) == (ws.CLOSE, (1000).to_bytes(2, "big"))
    # An echo, a ping and a pong after it: dropped, unanswered, not reported.
    framer.feed(server_frame(ws.TEXT, PAYLOAD) + server_frame(ws.PING, b"p"))
    framer.feed(server_frame(ws.PONG, b""))
    assert (events.responses, events.replies, ended) == ([], [], [])
    # The server's close ends the wait once, with no close reply (the client's went out).
    framer.feed(server_frame(ws.CLOSE, (1000).to_bytes(2, "big")))
    framer.feed(server_frame(ws.CLOSE, b""))
    assert ended == ["closed"] and events.replies == [] and events.closes == []
    assert not framer.open


def test_close_from_client_ends_its_wait_on_a_broken_frame() -> None:
    events = Events()
    framer = events.framer()
    ended: list[str] = []
    framer.close_from_client(lambda: ended.append("closed"))
    framer.feed(bytes((0x80 | 0x40 | ws.TEXT, 0)))  # a reserved bit
    assert ended == ["closed"] and events.errors == []


def test_a_silent_framer_reports_nothing() -> None:
    setup = ws.WsSetup("h", "/", (), (), PAYLOAD, ws.MessageFrames(PAYLOAD, text=True))
    framer = setup.silent_framer()
    framer.feed(server_frame(ws.TEXT, b"other") + server_frame(ws.PING, b"x"))
    assert framer.open
