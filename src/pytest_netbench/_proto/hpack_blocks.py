"""What an HPACK header block does to the dynamic table, read from its representations
alone (RFC 7541 section 6), without decoding a string.

A server that sends every response field as a literal *with incremental indexing* and
never refers back to those entries (nginx does) sends the same block bytes for the same
answer, yet each block adds entries to the table, so a decoder must not simply keep what
a block said by its bytes. It may, though, when the block refers to no dynamic-table entry
and resizes nothing: then its fields are the same whatever the table holds, and its only
effect is to add its indexed literals, in order. :func:`added_entries` tells which blocks
are of that kind.
"""

from __future__ import annotations

# The static table's last index (RFC 7541 Appendix A): a higher index is a dynamic entry.
STATIC_ENTRIES = 61


def _integer(block: bytes, at: int, prefix_bits: int) -> tuple[int, int]:
    """The integer at ``at`` with a ``prefix_bits``-bit prefix, and where it ends
    (RFC 7541 section 5.1); ``IndexError`` if the block ends inside it."""
    mask = (1 << prefix_bits) - 1
    value = block[at] & mask
    at += 1
    if value < mask:
        return value, at
    shift = 0
    while True:
        byte = block[at]
        at += 1
        value += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at
        if shift > 28:  # longer than any length or index a sane block holds
            raise IndexError("integer too long")


def _skip_string(block: bytes, at: int) -> int:
    """Where the string literal at ``at`` ends (RFC 7541 section 5.2)."""
    length, at = _integer(block, at, 7)
    end = at + length
    if end > len(block):
        raise IndexError("string runs past the block")
    return end


def added_entries(block: bytes) -> int | None:
    """How many entries ``block`` adds to the dynamic table, when its fields do not depend
    on what the table holds (no index above the static table's, no size update); ``None``
    when they may (or the block is malformed: the decoder will say how)."""
    at = 0
    added = 0
    size = len(block)
    try:
        while at < size:
            first = block[at]
            if first & 0x80:  # indexed field
                index, at = _integer(block, at, 7)
                if index == 0 or index > STATIC_ENTRIES:
                    return None
                continue
            if first & 0x40:  # literal with incremental indexing
                prefix = 6
                added += 1
            elif first & 0x20:  # dynamic table size update
                return None
            else:  # literal without indexing, or never indexed
                prefix = 4
            index, at = _integer(block, at, prefix)
            if index > STATIC_ENTRIES:
                return None
            if index == 0:
                at = _skip_string(block, at)  # the name, a literal
            at = _skip_string(block, at)  # the value
    except IndexError:
        return None
    return added
