"""Raw TCP framing (echo verify, fixed size, line, length prefix), with byte strings alone."""

from __future__ import annotations

import pytest

from pytest_netbench._proto.tcp import (
    OK,
    VERIFY_FAILED,
    DelimitedFramer,
    EchoFramer,
    chunked,
)


class Sink:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.errors: list[str] = []

    def on_response(self, code: int, keep_alive: bool) -> None:
        assert keep_alive is True
        self.codes.append(code)


PAYLOAD = bytes(range(64)) * 4  # 256 bytes


def echo() -> tuple[EchoFramer, Sink]:
    sink = Sink()
    return EchoFramer(PAYLOAD, sink.on_response, sink.errors.append), sink


def test_echo_exact_payload_is_one_ok_exchange() -> None:
    framer, sink = echo()
    framer.feed(PAYLOAD)
    assert sink.codes == [OK]
    framer.feed(PAYLOAD)  # it ended at a boundary: the next exchange is framed afresh
    assert sink.codes == [OK, OK]


def test_echo_split_at_every_byte_boundary_is_one_ok_exchange() -> None:
    for cut in range(len(PAYLOAD) + 1):
        framer, sink = echo()
        framer.feed(PAYLOAD[:cut])
        assert sink.codes == ([OK] if cut == len(PAYLOAD) else [])
        framer.feed(PAYLOAD[cut:])
        assert sink.codes == [OK], f"split at byte {cut}"


def test_echo_several_exchanges_in_one_buffer() -> None:
    framer, sink = echo()
    framer.feed(PAYLOAD * 3 + PAYLOAD[:10])
    assert sink.codes == [OK, OK, OK]
    framer.feed(PAYLOAD[10:])  # the partial fourth exchange was kept
    assert sink.codes == [OK, OK, OK, OK]


@pytest.mark.parametrize("position", [0, 1, 100, 255])
def test_echo_changed_byte_is_a_verify_failure_and_the_next_exchange_is_judged_afresh(
    position: int,
) -> None:
    corrupt = bytearray(PAYLOAD)
    corrupt[position] ^= 0xFF
    framer, sink = echo()
    framer.feed(bytes(corrupt[:position]))
    framer.feed(bytes(corrupt[position:]) + PAYLOAD)
    assert sink.codes == [VERIFY_FAILED, OK]
    assert sink.errors == []


def test_echo_received_in_place_in_uneven_pieces_is_verified_per_exchange() -> None:
    """The buffered-protocol path: bytes are written into ``free_space`` and reported."""
    corrupt = bytearray(PAYLOAD)
    corrupt[7] ^= 0xFF
    stream = PAYLOAD + bytes(corrupt) + PAYLOAD
    framer, sink = echo()
    at = 0
    for size in [1, 300, 2, 255, 1000]:
        space = framer.free_space()
        assert 0 < len(space) <= len(PAYLOAD)
        size = min(size, len(space), len(stream) - at)
        space[:size] = stream[at : at + size]
        framer.received(size)
        at += size
    while at < len(stream):
        space = framer.free_space()
        size = min(len(space), len(stream) - at)
        space[:size] = stream[at : at + size]
        framer.received(size)
        at += size
    assert sink.codes == [OK, VERIFY_FAILED, OK]


def test_echo_needs_a_payload() -> None:
    sink = Sink()
    with pytest.raises(ValueError, match="non-empty payload"):
        EchoFramer(b"", sink.on_response, sink.errors.append)


def test_echo_end_of_stream_completes_nothing() -> None:
    framer, sink = echo()
    framer.feed(PAYLOAD[:5])
    assert framer.feed_eof() is False
    assert sink.codes == []


def fixed(size: int, expected: bytes | None = None) -> tuple[DelimitedFramer, Sink]:
    sink = Sink()
    return DelimitedFramer(sink.on_response, sink.errors.append, size=size, expected=expected), sink


def test_fixed_size_frames_at_every_split() -> None:
    data = b"abcd" * 3
    for cut in range(len(data) + 1):
        framer, sink = fixed(4)
        framer.feed(data[:cut])
        framer.feed(data[cut:])
        assert sink.codes == [OK, OK, OK], f"split at byte {cut}"
        framer.feed(b"abcd")
        assert sink.codes == [OK, OK, OK, OK], f"split at byte {cut}"


def test_fixed_size_with_expected_bytes_verifies_each_frame() -> None:
    framer, sink = fixed(4, expected=b"abcd")
    framer.feed(b"abcdabXdabcd")
    assert sink.codes == [OK, VERIFY_FAILED, OK]


def test_line_delimited_frames_including_empty_lines() -> None:
    sink = Sink()
    framer = DelimitedFramer(sink.on_response, sink.errors.append, delimiter=b"\n")
    framer.feed(b"PONG\n\nPO")
    assert sink.codes == [OK, OK]
    framer.feed(b"NG\n")
    assert sink.codes == [OK, OK, OK]


def test_multi_byte_delimiter_split_across_feeds() -> None:
    data = b"+OK\r\n+OK\r\n"
    for cut in range(len(data) + 1):
        sink = Sink()
        framer = DelimitedFramer(
            sink.on_response, sink.errors.append, delimiter=b"\r\n", expected=b"+OK\r\n"
        )
        framer.feed(data[:cut])
        framer.feed(data[cut:])
        assert sink.codes == [OK, OK], f"split at byte {cut}"


def test_length_prefixed_frames_at_every_split() -> None:
    frames = [b"hello", b"", b"x" * 300]
    data = b"".join(len(f).to_bytes(2, "big") + f for f in frames)
    for cut in range(len(data) + 1):
        sink = Sink()
        framer = DelimitedFramer(sink.on_response, sink.errors.append, prefix_bytes=2)
        framer.feed(data[:cut])
        framer.feed(data[cut:])
        assert sink.codes == [OK, OK, OK], f"split at byte {cut}"
        framer.feed(b"\x00\x01z")
        assert sink.codes == [OK, OK, OK, OK], f"split at byte {cut}"


def test_frame_too_large_without_boundary_is_an_error_once() -> None:
    sink = Sink()
    framer = DelimitedFramer(
        sink.on_response, sink.errors.append, delimiter=b"\n", max_response=100
    )
    framer.feed(b"x" * 101)
    framer.feed(b"\n")
    assert sink.codes == []
    assert len(sink.errors) == 1
    assert "100 bytes" in sink.errors[0]
    assert framer.failed


@pytest.mark.parametrize(
    "options",
    [{}, {"size": 4, "delimiter": b"\n"}, {"delimiter": b"\n", "prefix_bytes": 2}],
)
def test_delimited_framer_needs_exactly_one_rule(options: dict[str, object]) -> None:
    sink = Sink()
    with pytest.raises(ValueError, match="exactly one"):
        DelimitedFramer(sink.on_response, sink.errors.append, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("size", "chunk", "expected"),
    [
        (10, 0, [10]),
        (10, 10, [10]),
        (10, 20, [10]),
        (10, 3, [3, 3, 3, 1]),
        (10, 5, [5, 5]),
        (10, 1, [1] * 10),
    ],
)
def test_chunked_splits_a_payload_into_write_sizes(
    size: int, chunk: int, expected: list[int]
) -> None:
    payload = bytes(range(size))
    parts = chunked(payload, chunk)
    assert [len(p) for p in parts] == expected
    assert b"".join(parts) == payload
