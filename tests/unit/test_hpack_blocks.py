"""Header blocks whose fields do not depend on the dynamic table (``hpack_blocks``), and the
response decoder that keeps them with the entries they add (``h2_headers``): byte strings
only, every answer held to a plain ``hpack.Decoder`` fed the same blocks."""

from __future__ import annotations

import random

import hpack
import pytest

from pytest_netbench._proto.h2_frames import ConnectionViolation
from pytest_netbench._proto.h2_headers import ResponseHeaderDecoder
from pytest_netbench._proto.hpack_blocks import added_entries


def _string(data: bytes) -> bytes:
    assert len(data) < 127
    return bytes((len(data),)) + data


def indexed_literal(name: bytes, value: bytes) -> bytes:
    """A literal with incremental indexing and a literal name (as nginx sends fields)."""
    return b"\x40" + _string(name) + _string(value)


def indexed_literal_static_name(index: int, value: bytes) -> bytes:
    assert index < 63
    return bytes((0x40 | index,)) + _string(value)


def indexed(index: int) -> bytes:
    assert index < 127
    return bytes((0x80 | index,))


def nginx_like(status: bytes, date: bytes = b"Fri, 27 Nov 2026 17:00:00 GMT") -> bytes:
    # :status as a literal with indexed name (static 8), then server, date, content-type.
    return (
        indexed_literal_static_name(8, status)
        + indexed_literal_static_name(54, b"nginx")  # server
        + indexed_literal_static_name(33, date)  # date
        + indexed_literal(b"content-type", b"text/plain")
    )


@pytest.mark.parametrize(
    ("block", "added"),
    [
        (indexed(8), 0),  # :status 200, static
        (hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple(":status", "204")]), 0),
        (nginx_like(b"200"), 4),
        (indexed(62), None),  # the newest dynamic entry
        (indexed_literal_static_name(8, b"200") + indexed(70), None),
        (bytes((0x4F, 0x7F)) + b"\x10" + b"x" * 20, None),  # name index 15+... = 142: dynamic
        (b"\x3f\xe1\x1f", None),  # a dynamic table size update
        (b"\x40\x05abc", None),  # a name running past the block
        (b"\xff\xff\xff\xff\xff\xff", None),  # an integer that never ends
        (b"", 0),
    ],
)
def test_blocks_that_depend_on_the_table_are_told_apart(block: bytes, added: int | None) -> None:
    assert added_entries(block) == added


def test_a_repeated_nginx_block_is_decoded_once_and_its_entries_still_land() -> None:
    ours, reference = ResponseHeaderDecoder(), hpack.Decoder()
    block = nginx_like(b"200")
    for _ in range(500):
        assert ours.status_of(block) == 200
        reference.decode(block, raw=True)
    # A block that reads the newest entries sees what the reference sees.
    reading = indexed(62) + indexed(65)  # content-type, then :status 200 (4 entries back)
    assert ours.status_of(reading) == 200
    expected = reference.decode(reading, raw=True)
    assert expected[1] == (b":status", b"200")
    assert list(ours._table.dynamic_entries) == list(reference.header_table.dynamic_entries)


def _random_block(rng: random.Random, reference: hpack.Decoder) -> bytes:
    """A block of one of the kinds a server may send, valid against ``reference``'s table."""
    entries = len(reference.header_table.dynamic_entries)
    kind = rng.choice(["nginx", "nginx", "big", "read", "static", "resize"])
    if kind == "nginx":
        status = rng.choice([b"200", b"404", b"503"])
        return nginx_like(status, date=b"d" * rng.randint(1, 60))
    if kind == "big":  # an entry larger than a small table empties it
        return indexed_literal_static_name(8, b"200") + indexed_literal(b"x-big", b"y" * 120)
    if kind == "read" and entries:
        picks = [62 + rng.randrange(entries) for _ in range(rng.randint(1, 3))]
        return b"".join(indexed(p) for p in picks if p < 127) or indexed(8)
    if kind == "resize":
        return rng.choice([b"\x3f\x61", b"\x3f\xe1\x1f"])  # to 128 bytes, or back to 4096
    return indexed(rng.choice([8, 9, 13, 14]))  # a static :status


@pytest.mark.parametrize("seed", range(20))
def test_any_sequence_of_blocks_reads_as_a_plain_decoder_reads_it(seed: int) -> None:
    rng = random.Random(seed)
    ours, reference = ResponseHeaderDecoder(), hpack.Decoder()
    for _ in range(300):
        block = _random_block(rng, reference)
        try:
            fields = reference.decode(block, raw=True)
        except hpack.HPACKError:
            with pytest.raises(ConnectionViolation):
                ours.status_of(block)
            return
        status = next((int(v) for n, v in fields if n == b":status" and v.isdigit()), 0)
        assert ours.status_of(block) == status
    ours.status_of(indexed(8))  # nothing pending may be lost: compare the tables
    reference.decode(indexed(8), raw=True)
    ours._decode(indexed(8))
    assert list(ours._table.dynamic_entries) == list(reference.header_table.dynamic_entries)
