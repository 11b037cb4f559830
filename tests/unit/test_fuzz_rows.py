"""Property-based fuzzing of file feeders: the records of a CSV or JSON-lines file
(``_proto/rows.py``: streamed in file order, or indexed for shuffles, a share of them per
worker, read in chunks of any size) and their values (``_proto/feeding.py``), from files of
arbitrary bytes, quotes, line breaks of every kind, blank lines and BOMs. Every record is
read once, by exactly one share, the same whichever way it is read; its values are columns
of one value a record, or a SpecError naming the row; never another exception."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from fuzzing import fuzz
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_netbench import SpecError, feeders
from pytest_netbench._input.spec import http_spec
from pytest_netbench._proto import rows as rows_proto
from pytest_netbench._proto.feeding import Columns, values_for

SERVER = "http://127.0.0.1:9"


@contextmanager
def written(data: bytes, suffix: str = ".csv") -> Iterator[str]:
    """A file holding ``data``, removed afterwards (a fixture's tmp_path is one per test,
    not per example)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "rows" + suffix)
        with open(path, "wb") as file:
            file.write(data)
        yield path


def reference(data: bytes, quoted: bool) -> list[tuple[int, bytes]]:
    """(start offset, record) of each record, as the module's docstring says: a line
    without its line break (lines end at LF), a quoted field's line breaks kept inside it,
    empty lines skipped."""
    out, at, pending, start, odd = [], 0, b"", 0, False
    for line in io.BytesIO(data).readlines():
        if not pending and not odd:
            start = at
        at += len(line)
        pending += line
        if quoted:
            odd ^= bool(line.count(b'"') % 2)
            if odd:
                continue
        record = pending.rstrip(b"\r\n")
        pending = b""
        if record:
            out.append((start, record))
    if pending and pending.rstrip(b"\r\n"):  # quotes never closed: it runs to the end
        out.append((start, pending.rstrip(b"\r\n")))
    return out


_PIECES = st.sampled_from(
    [
        b"a",
        b"b,c",
        b'"',
        b'""',
        b'"x,y"',
        b"\n",
        b"\r\n",
        b"\r",
        b"\r\r\n",
        b" ",
        b",",
        b"\xef\xbb\xbf",
    ]
)
_FILE = st.one_of(
    st.lists(_PIECES | st.binary(max_size=6), max_size=40).map(b"".join),
    st.binary(max_size=200),
)


@fuzz(3)
@given(_FILE, st.booleans(), st.booleans(), st.integers(1, 3), st.sampled_from([2, 7, 64, 1 << 18]))
@example(b"a\n\r\r\nb\n", False, False, 1, 1 << 18)  # a line of CRs: blank in either reading
def test_each_record_is_read_once_by_one_share_however_it_is_read(
    data: bytes, quoted: bool, skip_header: bool, shares: int, chunk: int
) -> None:
    records = reference(data, quoted)
    with written(data) as path, mock.patch.object(rows_proto, "_CHUNK_BYTES", chunk):
        header, start = rows_proto.header_and_start(path, quoted, skip_header)
        assert header == (records[0][1] if records else b"")
        if skip_header and records:
            records = records[1:]
        every: list[bytes] = []
        for share in range(shares):
            mine = [record for _, record in records[share::shares]]
            sequential = rows_proto.SequentialRecords(path, start, share, shares, quoted)
            for _ in range(2):  # a second pass reads the same
                got: list[bytes] = []
                while batch := sequential.read(7):
                    got += batch
                assert got == mine
                sequential.rewind()
            sequential.close()
            indexed = rows_proto.IndexedRecords(path, start, share, shares, quoted)
            assert indexed.records(indexed.offsets) == mine
            assert list(indexed.offsets) == [at for at, _ in records[share::shares]]
            indexed.close()
            every += mine
        assert sorted(every) == sorted(record for _, record in records)


def _take(feeder: Any, fields: tuple[str | None, ...], n: int = 50, share: int = 0) -> Columns:
    values = values_for("f", feeder, fields, seed=1, share=share, shares=1)
    try:
        return values.take(n)
    finally:
        values.close()


def _load(feeder: Any, target: str) -> Columns | None:
    """What a load makes of the feeder: its spec checked, then its first batch of values
    (None when the spec check refused it, with a SpecError)."""
    try:
        http_spec(SERVER + target, feeders={"f": feeder}, requests=1)
    except SpecError as exc:
        assert str(exc)
        return None
    fields: tuple[str | None, ...] = tuple(
        None if "." not in name else name.split(".", 1)[1]
        for name in target.replace("}", "{").split("{")[1::2]
        if name.startswith("f")
    )
    try:
        columns = _take(feeder, fields)
    except SpecError as exc:
        assert str(exc)
        return None
    assert len({len(column) for column in columns}) == 1, "columns of different lengths"
    return columns


@st.composite
def csv_file(draw: st.DrawFn) -> tuple[bytes, list[list[str]] | None, str]:
    """A CSV file: csv.writer's (its rows known) or anything, and its delimiter."""
    delimiter = draw(st.sampled_from([",", ";", "\t", "|", "é"]))
    if draw(st.booleans()):
        return draw(_FILE), None, delimiter
    width = draw(st.integers(1, 3))
    field = st.text(
        st.sampled_from(list('ab ,;"\n\r\té|')) | st.characters(exclude_categories=["Cs"]),
        max_size=6,
    )
    rows = draw(st.lists(st.lists(field, min_size=width, max_size=width), min_size=1, max_size=8))
    rows = [[f"c{i}" for i in range(width)], *rows]
    text = io.StringIO()
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
    writer = csv.writer(text, delimiter=delimiter, lineterminator=ending, quoting=quoting)
    writer.writerows(rows)
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    # With lines ending in LF alone csv.writer leaves a field's CR unquoted, which no CSV
    # reader reads back: such a file is only "anything" (a row or a SpecError).
    unquoted_cr = quoting == csv.QUOTE_MINIMAL and ending == "\n"
    readable = not (unquoted_cr and any("\r" in field for row in rows for field in row))
    return bom + text.getvalue().encode(), rows if readable else None, delimiter


@fuzz(2)
@given(csv_file(), st.sampled_from(["sequential", "shuffle"]))
def test_csv_rows_are_their_fields_or_a_spec_error(
    case: tuple[bytes, list[list[str]] | None, str], order: str
) -> None:
    data, rows, delimiter = case
    with written(data) as path:
        feeder = feeders.csv(path, order=order, on_end="stop", delimiter=delimiter)  # type: ignore[arg-type]
        columns = _load(feeder, "/${f.c0}")
        if rows is None:
            return  # anything: the property is that nothing but SpecError was raised
        whole = _take(feeder, ("c0", None) if len(rows[0]) == 1 else ("c0", "c1"))
    expected = [row[0].encode() for row in rows[1:]]
    if order == "sequential":
        assert whole[0] == expected
    else:
        assert sorted(whole[0]) == sorted(expected)
    assert columns is None or columns[0] == whole[0] or order != "sequential"


_JSON_LINES = st.lists(
    st.one_of(
        st.dictionaries(
            st.sampled_from(["id", "x"]), st.integers() | st.text(max_size=4) | st.none()
        )
        .map(json.dumps)
        .map(str.encode),
        st.sampled_from(
            [
                b"1,2",
                b"  ",
                b"{}",
                b"[1]",
                b'{"id": 1},{"id": 2}',
                b'"a"',
                b'\xef\xbb\xbf{"id": 7}',
                b"{",
                b"\xff",
                b"[" * 3000 + b"]" * 3000,
            ]
        ),
        st.binary(max_size=10),
    ),
    max_size=8,
)


@fuzz(2)
@given(_JSON_LINES, st.sampled_from([(None,), ("id",), (None, "id")]))
@example([b'\xef\xbb\xbf{"id": 7}', b'{"id": 8}'], ("id",))  # a BOM: each line reads alone
@example([b'{"id": 1},{"id": 2}', b'{"id": 3}'], ("id",))  # two objects on one line
@example([b'{"id": 1}', b"  "], ("id",))  # a line of spaces
def test_json_lines_are_their_values_or_a_spec_error(
    lines: list[bytes], fields: tuple[str | None, ...]
) -> None:
    data = b"\n".join(lines) + b"\n"
    records = [record for _, record in reference(data, False)]
    with written(data, ".jsonl") as path:
        try:
            columns = _take(feeders.jsonl(path, on_end="stop"), fields)
        except SpecError as exc:
            assert "not JSON" in str(exc) or "no field" in str(exc)
            return
        target = "/" + "".join("${f}" if f is None else f"${{f.{f}}}" for f in fields)
        _load(feeders.jsonl(path, on_end="stop"), target)
    assert [len(column) for column in columns] == [len(records)] * len(fields)
    for field, column in zip(fields, columns, strict=True):
        if field is None:
            assert column == records
        else:
            values = [json.loads(record)[field] for record in records]
            written_as = [
                v.encode() if isinstance(v, str) else json.dumps(v).encode() for v in values
            ]
            assert column == written_as


def test_csv_rows_that_csv_cannot_read_are_named() -> None:
    # Found by the fuzzer: csv.Error left the feeder (a bare CR in a header or a row read
    # with quotes), and a row with stray quotes merged the next into it, so zip(strict=True)
    # raised ValueError: each is now a SpecError naming the row, or the row read alone.
    with written(b"\ra\n1\n") as path:
        assert _load(feeders.csv(path), "/${f}") is None
    with written(b'id,name\n1,"a"\n2,b\rc\n') as path:
        try:
            _take(feeders.csv(path, on_end="stop"), ("id",))
        except SpecError as exc:
            assert "is not CSV" in str(exc)
        else:
            raise AssertionError("a bare CR in an unquoted field was read")
    with written(b'id,name\nx"y,"z\n3,c\n') as path:
        assert _take(feeders.csv(path, on_end="stop"), ("id", "name")) == [
            [b'x"y', b"3"],
            [b"z", b"c"],
        ]
