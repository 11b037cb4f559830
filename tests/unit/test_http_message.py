"""The whole-response reader of user flows, fed byte strings alone (no sockets)."""

from __future__ import annotations

import pytest

from pytest_netbench._proto.http_message import ResponseReader, WholeResponse


def read(chunks: list[bytes], method: str = "GET", eof: bool = False) -> tuple[list, list]:
    got: list[WholeResponse] = []
    errors: list[str] = []
    reader = ResponseReader(got.append, errors.append)
    reader.expect(method)
    for chunk in chunks:
        reader.feed(chunk)
    if eof:
        reader.feed_eof()
    return got, errors


def test_a_length_delimited_response_split_anywhere_is_read_whole() -> None:
    raw = b"HTTP/1.1 201 Created\r\nSet-Cookie: sid=1\r\nContent-Length: 5\r\n\r\nhello"
    for cut in range(1, len(raw)):
        got, errors = read([raw[:cut], raw[cut:]])
        assert errors == []
        assert [(r.status, r.reason, r.body, r.keep_alive) for r in got] == [
            (201, b"Created", b"hello", True)
        ]
        assert (b"Set-Cookie", b"sid=1") in got[0].headers


def test_chunked_body_is_joined_and_a_close_delimited_one_ends_at_eof() -> None:
    got, _ = read([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"])
    assert got[0].body == b"abc"
    got, _ = read([b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end"], eof=True)
    assert (got[0].body, got[0].keep_alive) == (b"to the end", False)


def test_a_body_cut_short_by_the_close_is_not_a_response() -> None:
    got, errors = read([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"], eof=True)
    assert got == [] and errors == []


def test_head_ends_with_its_header_block_and_interim_responses_are_skipped() -> None:
    got, _ = read([b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"], method="HEAD")
    assert (got[0].status, got[0].body) == (200, b"")
    got, _ = read([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"])
    assert [(r.status, r.body) for r in got] == [(200, b"x")]


def test_a_large_body_in_one_read_is_no_oversized_head() -> None:
    body = b"x" * 200_000
    got, errors = read([b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + body])
    assert errors == [] and got[0].body == body


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"HTTP/1.1 abc OK\r\n\r\n", "malformed response"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "101/Upgrade"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000, "larger than 64 KiB"),
    ],
)
def test_malformed_input_is_one_error_with_its_reason(raw: bytes, reason: str) -> None:
    got, errors = read([raw[:30_000], raw[30_000:]] if len(raw) > 30_000 else [raw])
    assert got == []
    assert len(errors) == 1 and reason in errors[0]
