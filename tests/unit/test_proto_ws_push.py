"""Reading server pushes on a held WebSocket connection, with byte strings only: each whole
message a push, its stamp read in every unit, pongs, and what is still arriving."""

from __future__ import annotations

import json

import pytest

from pytest_netbench._proto import websocket as ws
from pytest_netbench._proto.ws_push import (
    PushFramer,
    StampReader,
    epoch_ns,
    ping_frame,
    ping_sent_ns,
)

NOW_NS = 1_764_000_000_123_456_789  # 2025-11-24, in ns since the epoch


def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    return ws.frame_header(opcode, len(payload), masked=False, fin=fin) + payload


def unmask(frame: bytes) -> tuple[int, bytes]:
    assert frame[1] & 0x80, "client frames are masked"
    length = frame[1] & 0x7F
    key = frame[2:6]
    assert len(frame) == 6 + length
    return frame[0] & 0x0F, ws.mask(frame[6:], key)


class Pushes:
    def __init__(self, stamps: StampReader | None = None) -> None:
        self.pushes: list[tuple[int, str]] = []
        self.errors: list[str] = []
        self.replies: list[bytes] = []
        self.closes: list[tuple[int, str]] = []
        self.pongs: list[bytes] = []
        self.framer = PushFramer(
            stamps,
            lambda stamp, problem: self.pushes.append((stamp, problem)),
            self.errors.append,
            self.replies.append,
            lambda code, reason: self.closes.append((code, reason)),
            self.pongs.append,
        )


@pytest.mark.parametrize(
    ("value", "unit_ns"),
    [
        (NOW_NS / 1e9, 1_000),  # seconds, a float (time.time()): about 0.2 us of precision
        (NOW_NS // 1_000_000, 1_000_000),  # ms (Date.now())
        (NOW_NS // 1_000, 1_000),  # us
        (NOW_NS, 1),  # ns (time.time_ns())
    ],
)
def test_an_epoch_stamp_is_read_in_its_unit_by_its_size(value: float, unit_ns: int) -> None:
    assert 0 <= NOW_NS - epoch_ns(value) < unit_ns


def test_every_whole_message_is_a_push_even_an_empty_one() -> None:
    p = Pushes()
    p.framer.feed(server_frame(ws.TEXT, b"one") + server_frame(ws.BINARY, b"two"))
    p.framer.feed(server_frame(ws.TEXT, b""))
    assert p.pushes == [(0, ""), (0, ""), (0, "")]
    assert not p.framer.partial


def test_a_push_split_over_reads_and_fragments_is_partial_until_whole() -> None:
    p = Pushes()
    first = server_frame(ws.TEXT, b"hel", fin=False)
    p.framer.feed(first[:2])
    assert p.framer.partial and p.pushes == []
    p.framer.feed(first[2:] + server_frame(ws.PING, b"hb"))
    assert p.framer.partial
    assert [unmask(r) for r in p.replies] == [(ws.PONG, b"hb")]  # answered between fragments
    p.framer.feed(server_frame(ws.CONTINUATION, b"lo"))
    assert p.pushes == [(0, "")] and not p.framer.partial


def test_a_control_frame_half_read_is_not_a_push_under_way() -> None:
    p = Pushes()
    p.framer.feed(server_frame(ws.PING, b"x")[:1])
    assert not p.framer.partial


def test_a_json_stamp_field_is_read() -> None:
    p = Pushes(StampReader(json_field="ts"))
    p.framer.feed(server_frame(ws.TEXT, json.dumps({"seq": 1, "ts": NOW_NS // 1000}).encode()))
    assert p.pushes == [(NOW_NS // 1000 * 1000, "")]


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (b"not json", "not JSON, so it has no 'ts' stamp"),
        (b'{"seq": 1}', "without the stamp field 'ts'"),
        (b"[1, 2]", "without the stamp field 'ts'"),
        (b'{"ts": "soon"}', "not a positive epoch time: 'soon'"),
        (b'{"ts": true}', "not a positive epoch time: True"),
        (b'{"ts": -5}', "not a positive epoch time: -5"),
    ],
)
def test_a_push_without_a_readable_stamp_says_what_is_wrong(message: bytes, words: str) -> None:
    p = Pushes(StampReader(json_field="ts"))
    p.framer.feed(server_frame(ws.TEXT, message))
    [(stamp, problem)] = p.pushes
    assert stamp == 0 and words in problem


def test_a_binary_stamp_is_the_first_8_bytes_big_endian() -> None:
    p = Pushes(StampReader(binary=True))
    p.framer.feed(server_frame(ws.BINARY, NOW_NS.to_bytes(8, "big") + b"payload"))
    p.framer.feed(server_frame(ws.BINARY, b"short"))
    assert p.pushes[0] == (NOW_NS, "")
    assert p.pushes[1][0] == 0 and "too short for an 8-byte stamp" in p.pushes[1][1]


def test_a_ping_carries_its_send_time_back_in_the_pong() -> None:
    opcode, payload = unmask(ping_frame(12345))
    assert opcode == ws.PING and ping_sent_ns(payload) == 12345
    p = Pushes()
    p.framer.feed(server_frame(ws.PONG, payload))
    assert p.pongs == [payload] and p.pushes == []
    assert ping_sent_ns(b"other") == -1


def test_a_close_is_reported_with_its_code_and_answered() -> None:
    p = Pushes()
    p.framer.feed(
        server_frame(ws.TEXT, b"a") + server_frame(ws.CLOSE, ws.close_payload(4000, "bye"))
    )
    p.framer.feed(server_frame(ws.TEXT, b"after the close"))
    assert p.pushes == [(0, "")]
    assert p.closes == [(4000, "bye")]
    assert unmask(p.replies[-1]) == (ws.CLOSE, (4000).to_bytes(2, "big"))


def test_a_broken_frame_is_a_protocol_error_once() -> None:
    p = Pushes()
    p.framer.feed(bytes((0xC1, 0x01)) + b"x" + server_frame(ws.TEXT, b"a"))
    assert len(p.errors) == 1 and "reserved bits" in p.errors[0]
    assert p.pushes == []


def test_a_released_framer_reports_nothing() -> None:
    p = Pushes()
    p.framer.release()
    p.framer.feed(server_frame(ws.TEXT, b"a"))
    assert p.pushes == []


def test_a_whole_frame_in_one_read_and_the_general_parser_agree() -> None:
    stamps = StampReader(json_field="ts")
    frames = [
        server_frame(ws.TEXT, json.dumps({"ts": NOW_NS // 1000 + i}).encode()) for i in range(3)
    ]
    frames.append(server_frame(ws.BINARY, b"x" * 200))  # the 16-bit length form
    one_by_one, together = Pushes(stamps), Pushes(stamps)
    for frame in frames:
        one_by_one.framer.feed(frame)  # each whole in one read
    together.framer.feed(b"".join(frames))
    assert one_by_one.pushes == together.pushes and len(together.pushes) == 4


def test_a_masked_frame_in_one_read_is_still_refused() -> None:
    p = Pushes()
    p.framer.feed(bytes((0x81, 0x81)) + b"keyxa")
    assert p.pushes == [] and "masked" in p.errors[0]


def test_after_the_clients_close_pushes_and_pongs_are_not_counted() -> None:
    p = Pushes()
    ended: list[str] = []
    under_way = server_frame(ws.TEXT, b'{"ts": 1}')
    p.framer.feed(under_way[:-2])  # a push under way at the end
    frame = p.framer.close_from_client(lambda: ended.append("closed"))
    assert unmask(frame) == (ws.CLOSE, (1000).to_bytes(2, "big"))
    p.framer.feed(under_way[-2:] + server_frame(ws.TEXT, b"later"))
    p.framer.feed(server_frame(ws.PONG, b"x" * 8))
    p.framer.feed(server_frame(ws.CLOSE, (1000).to_bytes(2, "big")))
    assert (p.pushes, p.pongs, p.replies, p.closes) == ([], [], [], [])
    assert ended == ["closed"]
