"""Feeders at work: the values one share of a load draws from each feeder, a batch at a time.

:func:`values_for` turns a feeder's description (``_model/feeders.py``) into the
:class:`Values` of one share. ``take(n)`` gives one column per field asked for (``None``:
the value itself; a name: that field of a row), each of the same length: ``n``, or fewer
once a feeder with ``on_end="stop"`` has run out (``on_end="error"`` raises
:class:`FeederExhausted`). A row that cannot be read (a CSV row of the wrong width, a line
that is not JSON, a missing field) is a :class:`SpecError` naming it. Whole numbers stay
ints (the template writes them with ``%d``); every other value is bytes.

The same seed gives the same values, whatever the batch sizes: each share's generator is
seeded from the load's seed, the feeder's name and the share, and each value takes the
same draws from it however the values are batched.
"""

from __future__ import annotations

import csv
import functools
import importlib
import json
import random
from array import array
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any, Protocol

from pytest_netbench._errors import FeederExhausted, SpecError
from pytest_netbench._model.feeders import (
    Call,
    Choice,
    Count,
    CsvRows,
    FeedBatch,
    Feeder,
    JsonLines,
    RandInt,
    Uuid4,
)
from pytest_netbench._proto import rows as rows_proto

Fields = tuple[str | None, ...]
Columns = list[list[Any]]
# The largest range rng.choices draws from without bias (it multiplies a 53-bit float).
_CHOICES_SPAN = 2**53
# File feeders in file order keep up to this many rows of a share to serve its next passes.
_MEMORY_ROWS = 4096
_VARIANT = {ord(d): ord("89ab"[int(d, 16) & 3]) for d in "0123456789abcdef"}
# The JSON decoder's scanner: (value, end) of the JSON value that begins at an index.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class Values(Protocol):
    def take(self, n: int) -> Columns: ...

    def close(self) -> None: ...


def int_valued(feeder: Feeder) -> bool:
    """Whether the feeder's values are whole numbers (rendered without conversion)."""
    return isinstance(feeder, Count | RandInt)


def generator(seed: int, name: str, share: int) -> random.Random:
    """The random generator of feeder ``name`` in ``share``: a str seed is hashed with
    SHA-512, the same in every process and on every host."""
    return random.Random(f"netbench:{seed}:{name}:{share}")


def values_for(
    name: str, feeder: Feeder, fields: Fields, *, seed: int, share: int, shares: int
) -> Values:
    rng = generator(seed, name, share)
    if isinstance(feeder, Count):
        return _Counted(feeder, share, shares)
    if isinstance(feeder, RandInt):
        return _Drawn(_randint_draw(feeder, rng))
    if isinstance(feeder, Choice):
        return _Drawn(_choice_draw(feeder, rng))
    if isinstance(feeder, Uuid4):
        return _Drawn(lambda n: uuids(rng, n))
    if isinstance(feeder, CsvRows | JsonLines):
        supply = RowSupply(name, feeder, share, shares, rng)
        return _Rows(supply, fields, feeder)
    if isinstance(feeder, Call):
        return _Called(name, feeder, fields, share, shares, rng)
    raise TypeError(f"not a feeder: {feeder!r}")


class _Counted:
    def __init__(self, feeder: Count, share: int, shares: int) -> None:
        self._next = feeder.start + share * feeder.step
        self._stride = shares * feeder.step

    def take(self, n: int) -> Columns:
        first, stride = self._next, self._stride
        self._next = first + n * stride
        return [list(range(first, self._next, stride))] if stride else [[first] * n]

    def close(self) -> None:
        pass


class _Drawn:
    """A feeder whose values are drawn independently, ``draw(n)`` at a time."""

    def __init__(self, draw: Callable[[int], list[Any]]) -> None:
        self._draw = draw

    def take(self, n: int) -> Columns:
        return [self._draw(n)]

    def close(self) -> None:
        pass


def _randint_draw(feeder: RandInt, rng: random.Random) -> Callable[[int], list[int]]:
    low, high = feeder.low, feeder.high
    if high - low < _CHOICES_SPAN:
        population = range(low, high + 1)
        return lambda n: rng.choices(population, k=n)
    return lambda n: [rng.randint(low, high) for _ in range(n)]


def _choice_draw(feeder: Choice, rng: random.Random) -> Callable[[int], list[bytes]]:
    values = [as_bytes(v) for v in feeder.values]
    if not feeder.weights:
        return lambda n: rng.choices(values, k=n)
    cumulative: list[float] = []
    total = 0.0
    for weight in feeder.weights:
        total += weight
        cumulative.append(total)
    return lambda n: rng.choices(values, cum_weights=cumulative, k=n)


def uuids(rng: random.Random, n: int) -> list[bytes]:
    """``n`` version-4 UUIDs in their 36-character form, 16 random bytes each."""
    digits = rng.randbytes(16 * n).hex().encode()
    return [
        b"%s-%s-4%s-%c%s-%s"
        % (
            digits[i : i + 8],
            digits[i + 8 : i + 12],
            digits[i + 13 : i + 16],
            _VARIANT[digits[i + 16]],
            digits[i + 17 : i + 20],
            digits[i + 20 : i + 32],
        )
        for i in range(0, 32 * n, 32)
    ]


def as_bytes(value: Any) -> bytes:
    """A value as it goes into a request: text as UTF-8, bytes as they are, anything else
    as JSON writes it (``true``, ``null``, ``1.5``, an object)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value, separators=(",", ":")).encode()


class RowSupply:
    """The records of a file feeder for one share, in its order, wrapping or running out
    as its ``on_end`` says."""

    def __init__(
        self, name: str, feeder: CsvRows | JsonLines, share: int, shares: int, rng: random.Random
    ) -> None:
        self.name = name
        self.feeder = feeder
        self._rng = rng
        self._share, self._shares = share, shares
        quoted = isinstance(feeder, CsvRows)
        self.header, start = rows_proto.header_and_start(
            feeder.path, quoted, isinstance(feeder, CsvRows) and not feeder.columns
        )
        self._sequential: rows_proto.SequentialRecords | None = None
        self._indexed: rows_proto.IndexedRecords | None = None
        # A small file in file order is read once: its passes after the first are served
        # from memory (bounded by _MEMORY_ROWS), instead of reopening it every few rows.
        self._first_pass: list[bytes] | None = []
        self._memory: list[bytes] | None = None
        self._position = 0
        path = feeder.path
        if feeder.order == "sequential":
            self._sequential = rows_proto.SequentialRecords(path, start, share, shares, quoted)
        else:
            self._indexed = rows_proto.IndexedRecords(path, start, share, shares, quoted)

    def take(self, n: int) -> list[bytes]:
        if self._memory is not None:
            return self._from_memory(self._memory, n)
        if self._sequential is not None:
            return self._take_sequential(self._sequential, n)
        assert self._indexed is not None
        indexed = self._indexed
        if not len(indexed):
            return self._ran_out([], n)
        if self.feeder.order == "random":
            return indexed.records(self._rng.choices(indexed.offsets, k=n))
        out: list[bytes] = []
        while len(out) < n:
            out += indexed.records(self._shuffled(indexed.offsets, n - len(out)))
            if len(out) < n:
                if self.feeder.on_end != "wrap":
                    return self._ran_out(out, n)
                self._position = 0
        return out

    def _shuffled(self, offsets: array[int], k: int) -> array[int]:
        """The next ``k`` (or fewer, at the end of a pass) of a shuffled pass: Fisher-Yates
        a step per row taken, so a pass costs no pause at its start, however long."""
        start = self._position
        end = min(start + k, len(offsets))
        rows, draw = len(offsets), self._rng.random
        for here in range(start, end):
            there = here + int(draw() * (rows - here))
            offsets[here], offsets[there] = offsets[there], offsets[here]
        self._position = end
        return offsets[start:end]

    def _take_sequential(self, records: rows_proto.SequentialRecords, n: int) -> list[bytes]:
        out = records.read(n)
        if self._first_pass is not None:
            self._first_pass += out
            if len(self._first_pass) > _MEMORY_ROWS:
                self._first_pass = None
        if len(out) == n:
            return out
        if self.feeder.on_end != "wrap":
            return self._ran_out(out, n)
        if self._first_pass is not None:  # the whole pass is in memory: no more reading
            self._memory = self._first_pass
            records.close()
            return out + self._from_memory(self._memory, n - len(out))
        records.rewind()
        self._first_pass = None
        while len(out) < n:
            more = records.read(n - len(out))
            if not more:
                records.rewind()
            out += more
        return out

    def _from_memory(self, rows: list[bytes], n: int) -> list[bytes]:
        if not rows:
            return self._ran_out([], n)
        out: list[bytes] = []
        while len(out) < n:
            taken = rows[self._position : self._position + n - len(out)]
            out += taken
            self._position = (self._position + len(taken)) % len(rows)
        return out

    def _ran_out(self, out: list[bytes], n: int) -> list[bytes]:
        """Fewer than ``n`` records are left: "stop" gives them, "error" raises; a share
        that has no rows at all cannot "wrap"."""
        on_end = self.feeder.on_end
        what = f"share {self._share} of {self._shares}" if self._shares > 1 else "the load"
        if on_end == "wrap":
            raise FeederExhausted(
                f"feeder {self.name!r}: {self.feeder.path} has no rows for {what} (share i"
                " of n takes rows i, i+n, ...): give the file at least as many rows as the"
                " load has workers"
            )
        if on_end == "error":
            raise FeederExhausted(
                f"feeder {self.name!r} ran out of rows of {self.feeder.path} ({what} sent"
                " all of its rows, and on_end='error'): give more rows, ask for fewer"
                " requests, or use on_end='wrap' (start over) or 'stop' (end the load)"
            )
        return out

    def close(self) -> None:
        if self._sequential is not None:
            self._sequential.close()
        if self._indexed is not None:
            self._indexed.close()


class _Rows:
    """The columns of a CSV or JSON-lines feeder's rows."""

    def __init__(self, supply: RowSupply, fields: Fields, feeder: CsvRows | JsonLines) -> None:
        self._supply = supply
        self._fields = fields
        self._csv = feeder if isinstance(feeder, CsvRows) else None
        if self._csv is not None:
            names = csv_names(supply.header, self._csv)
            self._width = len(names)
            self._indexes = [names.index(field) for field in fields if field is not None]

    def take(self, n: int) -> Columns:
        records = self._supply.take(n)
        if self._csv is not None:
            return csv_columns(records, self._indexes, self._width, self._csv, self._supply.name)
        return jsonl_columns(records, self._fields, self._supply.name)

    def close(self) -> None:
        self._supply.close()


def csv_names(header: bytes, feeder: CsvRows) -> list[str]:
    """A CSV feeder's column names: ``columns=``, or its header row's."""
    if feeder.columns:
        return list(feeder.columns)
    try:
        names = next(
            csv.reader([header.decode("utf-8-sig", "replace")], delimiter=feeder.delimiter)
        )
    except csv.Error as exc:  # a bare CR, a field past csv's limit
        raise SpecError(
            f"{feeder.path}: the header row is not CSV ({exc}): {header[:80]!r}"
        ) from None
    return [name.strip() for name in names]


def csv_columns(
    records: list[bytes], indexes: list[int], width: int, feeder: CsvRows, name: str
) -> Columns:
    """The columns at ``indexes`` of CSV records of ``width`` fields each."""
    if not records:
        return [[] for _ in indexes]
    delimiter = feeder.delimiter.encode()
    joined = b"\n".join(records)
    if b'"' not in joined:
        # Every field of the batch in one split; column j is every width-th from j. That
        # each row has its width is checked in C too: what is left of the batch once all
        # but delimiters and line breaks are deleted is one pattern, width-1 delimiters a
        # row (a row short of a field and another with one too many would otherwise make
        # up for each other and shift the fields between them).
        rows_pattern = (delimiter * (width - 1) + b"\n") * len(records)
        if joined.translate(None, _deletions(delimiter)) == rows_pattern[:-1]:
            fields = joined.replace(b"\n", delimiter).split(delimiter)
            return [fields[index::width] for index in indexes]
        rows = list(map(bytes.split, records, repeat(delimiter)))
    else:
        rows = _csv_rows(records, feeder, name)
    for record, row in zip(records, rows, strict=True):
        if len(row) != width:
            raise SpecError(
                f"feeder {name!r}: a row of {feeder.path} has {len(row)} fields where the"
                f" header has {width}: {record[:80]!r}"
            )
    return [list(map(itemgetter(index), rows)) for index in indexes]


def _csv_rows(records: list[bytes], feeder: CsvRows, name: str) -> list[list[bytes]]:
    """Each record's fields, as csv.reader reads them. One reader reads the batch; when it
    cannot (a bare CR, a field past csv's limit), or a quoted field runs on past its record
    and merges two rows (stray quotes, ``x"y,"z``), each record is read alone, and one that
    cannot be is named."""
    texts = [record.decode("utf-8", "surrogateescape") for record in records]
    try:
        rows = list(csv.reader(texts, delimiter=feeder.delimiter))
    except csv.Error:
        rows = []
    if len(rows) != len(records):
        rows = []
        for record, text in zip(records, texts, strict=True):
            try:
                rows.append(next(csv.reader((text,), delimiter=feeder.delimiter), []))
            except csv.Error as exc:
                raise SpecError(
                    f"feeder {name!r}: a row of {feeder.path} is not CSV ({exc}): {record[:80]!r}"
                ) from None
    return [[field.encode("utf-8", "surrogateescape") for field in row] for row in rows]


@functools.cache
def _deletions(delimiter: bytes) -> bytes:
    """Every byte but ``delimiter`` and LF: what ``bytes.translate`` deletes."""
    return bytes(b for b in range(256) if b not in (delimiter[0], 10))


def jsonl_columns(records: list[bytes], fields: Fields, name: str) -> Columns:
    if all(field is None for field in fields):
        return [records for _ in fields]
    values = _json_values(records, name)
    return [records if field is None else _field_column(values, field, name) for field in fields]


def _json_values(records: list[bytes], name: str) -> list[Any]:
    """The one JSON value of each record. The batch is scanned as one text, each record
    from where it begins (the C scanner: as fast as one ``json.loads`` of the batch as an
    array, which cannot tell two values on one line, or a value over two, from a value a
    line), and each must end where its line ends. A record that does not (a BOM, spaces
    around it, two values, a line that is not JSON) sends the batch to ``json.loads`` a
    record at a time, which reads what it can read and says what it cannot."""
    values: list[Any] = []
    try:
        text = b"\n".join(records).decode()
        at = 0
        for line in text.split("\n"):
            value, end = _SCAN(text, at)
            if end != at + len(line):
                raise ValueError("not one value on the line")
            values.append(value)
            at = end + 1
    except (StopIteration, ValueError, RecursionError):  # StopIteration: no value begins
        return [_json_line(record, name) for record in records]
    return values


def _json_line(record: bytes, name: str) -> Any:
    try:
        return json.loads(record)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past the parser
        raise SpecError(f"feeder {name!r}: a line is not JSON ({exc}): {record[:80]!r}") from None


def _field_column(rows: list[Any], field: str, name: str) -> list[bytes]:
    try:
        return [as_bytes(row[field]) for row in rows]
    except (KeyError, TypeError):
        bad = next(r for r in rows if not isinstance(r, dict) or field not in r)
        raise SpecError(
            f"feeder {name!r}: a row has no field {field!r}: {json.dumps(bad)[:80]}"
        ) from None


def load_function(function: str | Callable[[FeedBatch], Sequence[Any]]) -> Callable[..., Any]:
    """A :func:`~pytest_netbench.feeders.call` feeder's function; ``"module:name"`` is
    imported (``ValueError`` says why it cannot be)."""
    if not isinstance(function, str):
        return function
    module_name, sep, attribute = function.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"{function!r} is not 'module:function'")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import {function!r}: {exc}") from None
    if not callable(value):
        raise ValueError(f"{function!r} is not callable")
    return value  # type: ignore[no-any-return]


class _Called:
    """A user's function, called ``batch`` values at a time; its answers are buffered."""

    def __init__(
        self, name: str, feeder: Call, fields: Fields, share: int, shares: int, rng: random.Random
    ) -> None:
        self._name, self._feeder, self._fields = name, feeder, fields
        self._function = load_function(feeder.function)
        self._share, self._shares, self._rng = share, shares, rng
        self._produced = 0
        self._buffer: Columns = [[] for _ in fields]
        self._ended = False

    def take(self, n: int) -> Columns:
        while len(self._buffer[0]) < n and not self._ended:
            self._call()
        out = [column[:n] for column in self._buffer]
        self._buffer = [column[n:] for column in self._buffer]
        if len(out[0]) < n and self._feeder.on_end == "error":
            raise FeederExhausted(
                f"feeder {self._name!r}: {self._feeder.to_dict()['function']} ran out after"
                f" {self._produced:,} values: return more, or on_end='stop'"
            )
        return out

    def _call(self) -> None:
        size = self._feeder.batch
        batch = FeedBatch(size, self._produced, self._share, self._shares, self._rng)
        values = list(self._function(batch))
        if len(values) < size:
            self._ended = True
        values = values[:size]
        self._produced += len(values)
        for column, field in zip(self._buffer, self._fields, strict=True):
            if field is None:
                column.extend(map(as_bytes, values))
            else:
                column.extend(_field_column(values, field, self._name))

    def close(self) -> None:
        pass
