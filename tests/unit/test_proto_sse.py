"""Server-sent events parsed sans-IO: byte strings in, events out, split at every offset."""

from __future__ import annotations

import pytest

from pytest_netbench._proto.sse import SseEvent, SseParser

STREAM = (
    b"\xef\xbb\xbf: a comment first\r\n"
    b"retry: 1500\r\n"
    b"id: 7\r\n"
    b"event: token\r\n"
    b"data: one\r\n"
    b"data:two\r\n"
    b"\r\n"
    b'data: {"n": 2}\r'
    b"\r"
    b": keep-alive\n"
    b"id\n"
    b"data\n"
    b"\n"
    b"event: ignored without data\n"
    b"\n"
    b"data: [DONE]\n\n"
    b"data: cut short, never dispatched"
)
EXPECTED = [
    SseEvent("one\ntwo", "token", "7", 1500),
    SseEvent('{"n": 2}', "message", "7", 1500),
    SseEvent("", "message", "", 1500),
    SseEvent("[DONE]", "message", "", 1500),
]


def _parse(pieces: list[bytes]) -> tuple[list[SseEvent], SseParser]:
    parser = SseParser()
    events: list[SseEvent] = []
    for piece in pieces:
        events += parser.feed(piece)
    return events, parser


def test_whole_stream_in_one_piece() -> None:
    events, parser = _parse([STREAM])
    assert events == EXPECTED
    assert parser.comments == 2
    assert parser.problem == "" and parser.malformed == 0
    assert parser.pending()  # the last event was cut short


@pytest.mark.parametrize("cut", range(1, len(STREAM)))
def test_split_at_every_offset(cut: int) -> None:
    events, parser = _parse([STREAM[:cut], STREAM[cut:]])
    assert events == EXPECTED
    assert parser.comments == 2 and parser.malformed == 0


def test_one_byte_at_a_time() -> None:
    events, _ = _parse([STREAM[i : i + 1] for i in range(len(STREAM))])
    assert events == EXPECTED


def test_cr_then_lf_in_the_next_piece_is_one_line_end() -> None:
    events, _ = _parse([b"data: a\r", b"\n", b"\r", b"\n"])
    assert events == [SseEvent("a")]


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        (b"bogus line\n\ndata: x\n\n", "a line with no field the format knows"),
        (b"retry: soon\ndata: x\n\n", "retry: 'soon' is not a whole number of ms"),
        (b"data: \xff\xfe\ndata: x\n\n", "a line that is not UTF-8"),
    ],
)
def test_malformed_lines_are_reported_and_parsing_goes_on(stream: bytes, words: str) -> None:
    events, parser = _parse([stream])
    assert events[-1].data == "x"
    assert parser.malformed == 1
    assert parser.problem.startswith("malformed event: ") and words in parser.problem


def test_id_with_nul_is_ignored() -> None:
    events, _ = _parse([b"id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n"])
    assert [e.id for e in events] == ["1", "1"]
