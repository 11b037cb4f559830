"""The records of a CSV or JSON-lines file, as one share of a load reads them.

A share reads only its own records (share *i* of *n*: records i, i+n, i+2n, ... in file
order), so no two shares send the same row, and never holds the file whole:

- in file order (:class:`SequentialRecords`) it streams the file, a chunk of lines at a
  time, and keeps a batch;
- in a random order (:class:`IndexedRecords`) it keeps where each of its records starts
  (8 bytes a record, in an ``array``) and reads them through ``mmap``, so the file's pages
  are the page cache's, shared by every worker on the host.

A record is a line without its line break; a CSV field in quotes may hold line breaks, and
its record then runs on to the line that closes the quotes. Empty lines are skipped.
Records come out as bytes, exactly as in the file.
"""

from __future__ import annotations

import io
import mmap
from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import BinaryIO

_CHUNK_BYTES = 256 * 1024
_BLANK = (b"\n", b"\r\n", b"\r")


def _records(lines: Iterator[bytes], quoted: bool) -> Iterator[tuple[int, bytes]]:
    """(byte length including line breaks, record) for each record of ``lines``, blank
    lines included as empty records (their callers skip them)."""
    for line in lines:
        size = len(line)
        if quoted and line.count(b'"') % 2:
            # An open quote: the record goes on to the line that closes it.
            parts = [line]
            for more in lines:
                parts.append(more)
                size += len(more)
                if more.count(b'"') % 2:
                    break
            line = b"".join(parts)
        yield size, line.rstrip(b"\r\n")


def header_and_start(path: str, quoted: bool, skip_header: bool) -> tuple[bytes, int]:
    """The first record (the header row, when there is one) and the byte offset where the
    data records begin."""
    with open(path, "rb") as file:
        offset = 0
        for size, record in _records(iter(file), quoted):
            offset += size
            if record:
                return (record, offset) if skip_header else (record, offset - size)
    return b"", offset


class SequentialRecords:
    """One share's records in file order, streamed: ``read(n)`` gives up to ``n``, fewer
    only at the end of the file; ``rewind()`` starts the next pass.

    The file is read a chunk at a time and cut into lines by ``bytes.splitlines`` (one C
    call a chunk); the share keeps every *n*-th line by slicing. Only a chunk with quotes
    (CSV) or a bare CR goes line by line."""

    def __init__(self, path: str, start: int, share: int, shares: int, quoted: bool) -> None:
        self._path, self._start, self._share, self._shares = path, start, share, shares
        self._quoted = quoted
        self._file: BinaryIO | None = None
        self.passes = 0
        self.rewind()

    def rewind(self) -> None:
        self.close()
        self._file = open(self._path, "rb", buffering=0)  # noqa: SIM115 (kept open)
        self._file.seek(self._start)
        self._tail = b""  # the start of a line (or quoted record) the next chunk ends
        self._ready: list[bytes] = []  # this share's records of the chunk read last
        self._at = 0
        self._number = 0  # records of the file seen in this pass (every share's)
        self.passes += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def read(self, n: int) -> list[bytes]:
        out: list[bytes] = []
        while True:
            wanted = n - len(out)
            taken = self._ready[self._at : self._at + wanted]
            self._at += len(taken)
            out += taken
            if len(out) == n or self._file is None:
                return out
            self._ready, self._at = self._next_chunk(), 0

    def _next_chunk(self) -> list[bytes]:
        assert self._file is not None
        read = self._file.read(_CHUNK_BYTES)
        data = self._tail + read
        if not read:  # the end of the file: its last line may have no line break
            self.close()
            self._tail = b""
            return self._mine(data, at_end=True) if data else []
        cut = data.rfind(b"\n") + 1
        self._tail = data[cut:]
        return self._mine(data[:cut], at_end=False)

    def _mine(self, data: bytes, at_end: bool) -> list[bytes]:
        if (self._quoted and b'"' in data) or (
            b"\r" in data and data.count(b"\r") != data.count(b"\r\n")
        ):
            return self._mine_slowly(data, at_end)
        # The common case: a record a line. Every record counts; this share keeps its own.
        # (A membership test of the list finds a blank line: searching the bytes for two
        # line breaks in a row is slower than splitting them.)
        lines = data.splitlines()
        if b"" in lines:
            lines = list(filter(None, lines))
        first = (self._share - self._number) % self._shares
        self._number += len(lines)
        return lines if self._shares == 1 else lines[first :: self._shares]

    def _mine_slowly(self, data: bytes, at_end: bool) -> list[bytes]:
        lines = io.BytesIO(data).readlines()  # split at LF only, line breaks kept
        if self._quoted and not at_end:
            # A record whose quotes are still open at the end of the chunk goes on in the
            # next one: give its lines back.
            odd, begins, offset = False, 0, 0
            for line in lines:
                if not odd:
                    begins = offset
                odd ^= bool(line.count(b'"') % 2)
                offset += len(line)
            if odd:
                self._tail = data[begins:] + self._tail
                lines = io.BytesIO(data[:begins]).readlines()
        mine: list[bytes] = []
        for _, record in _records(iter(lines), self._quoted):
            if not record:
                continue
            if self._number % self._shares == self._share:
                mine.append(record)
            self._number += 1
        return mine


class IndexedRecords:
    """One share's records, found by where each starts: ``offsets`` (8 bytes a record,
    the file read once to build it) and an ``mmap`` of the file to read them from."""

    def __init__(self, path: str, start: int, share: int, shares: int, quoted: bool) -> None:
        self._quoted = quoted
        self.offsets = array("q")
        self._map: mmap.mmap | None = None
        with open(path, "rb", buffering=_CHUNK_BYTES) as file:
            file.seek(start)
            offset, number = start, 0
            while chunk := file.readlines(_CHUNK_BYTES):
                joined = b"".join(chunk)
                # Blank lines (a line of CRs is one too) need the line-by-line reading.
                blank = any(b in chunk for b in _BLANK) or b"\r\r" in joined
                if (quoted and b'"' in joined) or blank:
                    if quoted:  # a chunk ends at a record's end if its quotes are even
                        while joined.count(b'"') % 2 and (more := file.readline()):
                            chunk.append(more)
                            joined += more
                    for size, record in _records(iter(chunk), quoted):
                        if record:
                            if number % shares == share:
                                self.offsets.append(offset)
                            number += 1
                        offset += size
                    continue
                # A record a line: where each starts, in bulk.
                starts = list(accumulate(map(len, chunk), initial=offset))
                first = (share - number) % shares
                self.offsets.extend(starts[first : len(chunk) : shares])
                offset = starts[-1]
                number += len(chunk)
            if self.offsets:
                self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self.offsets)

    def records(self, offsets: Sequence[int]) -> list[bytes]:
        """The records that start at ``offsets``, in that order."""
        data = self._map
        if data is None:
            return []
        size = len(data)
        out = []
        for start in offsets:
            end = data.find(b"\n", start)
            record = data[start : end if end >= 0 else size]
            while self._quoted and end >= 0 and record.count(b'"') % 2:
                end = data.find(b"\n", end + 1)
                record = data[start : end if end >= 0 else size]
            out.append(record.rstrip(b"\r\n"))
        return out

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
