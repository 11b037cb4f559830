"""Where the values of a request's ``${name}`` placeholders come from: feeders, as data.

``from pytest_netbench import feeders``, then ``feeders={"id": feeders.count()}`` on an
HTTP load. Each function here mirrors the standard library a Python user already knows
(``itertools.count``, ``random.randint``, ``random.choices``, ``uuid.uuid4``, ``csv``)
and returns a frozen description: a file's path, its columns, an order, a range. A load's
spec holds only these, so it pickles to worker processes and Dask workers, and each
worker builds its own values from them (``_proto/feeding.py``), for its own share.

Every feeder's checks are the load's (``http_load`` says what is wrong, before any socket).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_netbench._model.feeder_base import Feeder as Feeder

# The order a file's rows go out in, and what happens when a share has sent them all.
RowOrder = Literal["sequential", "shuffle", "random"]
ROW_ORDERS: tuple[RowOrder, ...] = ("sequential", "shuffle", "random")
OnEnd = Literal["wrap", "stop", "error"]
ON_ENDS: tuple[OnEnd, ...] = ("wrap", "stop", "error")

# What a callable feeder may return for one value: a scalar, or a row of named fields.
Scalar = str | bytes | int | float


@dataclass(frozen=True, slots=True)
class Count(Feeder):
    """Whole numbers from ``start`` by ``step``, never repeated across the load: share
    *i* of *n* takes ``start + (i + k*n) * step`` for k = 0, 1, ..."""

    start: int = 0
    step: int = 1


@dataclass(frozen=True, slots=True)
class RandInt(Feeder):
    """A random whole number from ``low`` to ``high``, both included."""

    low: int
    high: int


@dataclass(frozen=True, slots=True)
class Choice(Feeder):
    """One of ``values`` at random, each as likely as its weight says (all alike without
    weights)."""

    values: tuple[Scalar, ...]
    weights: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Uuid4(Feeder):
    """A random UUID (version 4) in its 36-character form, drawn from the load's seed."""


@dataclass(frozen=True, slots=True)
class CsvRows(Feeder):
    """The rows of a CSV file; ``${name.column}`` is a column of the row. The first row
    names the columns, unless ``columns`` does (a file without a header row)."""

    path: str
    order: RowOrder = "sequential"
    on_end: OnEnd = "wrap"
    columns: tuple[str, ...] = ()
    delimiter: str = ","


@dataclass(frozen=True, slots=True)
class JsonLines(Feeder):
    """The lines of a JSON-lines file; ``${name}`` is the line as written,
    ``${name.field}`` a top-level field of its object."""

    path: str
    order: RowOrder = "sequential"
    on_end: OnEnd = "wrap"


@dataclass(frozen=True, slots=True)
class Call(Feeder):
    """Values from a function of yours, called with a :class:`FeedBatch` for ``batch``
    values at a time, off the hot path. ``function`` is ``"module:name"`` or a callable
    that pickles (a module-level function). It returns a list of values (str, bytes,
    numbers) or of rows (dicts, for ``${name.field}``); fewer than asked means it has run
    out, and ``on_end`` says what then: ``"stop"`` or ``"error"``."""

    function: str | Callable[[FeedBatch], Sequence[Any]]
    batch: int = 1024
    on_end: OnEnd = "stop"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "call", **_fields(self), "function": function_name(self.function)}


@dataclass(frozen=True, slots=True)
class FeedBatch:
    """What a :func:`call` feeder's function is asked for: ``size`` values, the first of
    them the ``start``-th value of this share's feeder (0, then ``size``, ...).

    ``share`` of ``shares``: the worker's part of the load. ``numbers`` are the values'
    load-wide sequence numbers (share *i* of *n* has i, i+n, i+2n, ...), never the same in
    two shares, for values that must not repeat. ``rng``: seeded from the load's ``seed``,
    the feeder's name and the share, so the same seed gives the same values."""

    size: int
    start: int
    share: int
    shares: int
    rng: random.Random

    @property
    def numbers(self) -> range:
        first = self.share + self.start * self.shares
        return range(first, first + self.size * self.shares, self.shares)


def count(start: int = 0, step: int = 1) -> Count:
    """``start``, ``start + step``, ... as ``itertools.count``, each sent once by the whole
    load (its shares interleave: share *i* of *n* takes every *n*-th number)."""
    return Count(start, step)


def randint(low: int, high: int) -> RandInt:
    """A random whole number with ``low <= n <= high``, as ``random.randint``."""
    return RandInt(low, high)


def choice(values: Sequence[Scalar], weights: Sequence[float] | None = None) -> Choice:
    """One of ``values`` at random, as ``random.choices(values, weights)``."""
    return Choice(_tuple(values), _tuple(weights) if weights is not None else ())


def uuid4() -> Uuid4:
    """A random UUID, as ``str(uuid.uuid4())``, but reproducible from the load's seed."""
    return Uuid4()


def csv(
    path: str | os.PathLike[str],
    *,
    order: RowOrder = "sequential",
    on_end: OnEnd = "wrap",
    columns: Sequence[str] | None = None,
    delimiter: str = ",",
) -> CsvRows:
    """The rows of a CSV file, read as the load goes (never whole into memory).

    ``order``: ``"sequential"`` (file order), ``"shuffle"`` (each row once a pass, in a
    random order) or ``"random"`` (a random row each time, repeats allowed). The rows are
    split between the load's shares (share *i* of *n* takes rows i, i+n, ...), so no two
    workers send the same row. ``on_end``, when a share has sent all its rows:
    ``"wrap"`` starts over, ``"stop"`` ends the load (each row sent at most once),
    ``"error"`` fails it. ``columns``: the names of a file that has no header row."""
    return CsvRows(
        os.fspath(path),
        order,
        on_end,
        _tuple(columns) if columns is not None else (),
        delimiter,
    )


def jsonl(
    path: str | os.PathLike[str], *, order: RowOrder = "sequential", on_end: OnEnd = "wrap"
) -> JsonLines:
    """The lines of a JSON-lines file (one JSON value a line), split and ordered as
    :func:`csv`'s rows are."""
    return JsonLines(os.fspath(path), order, on_end)


def call(
    function: str | Callable[[FeedBatch], Sequence[Any]],
    *,
    batch: int = 1024,
    on_end: OnEnd = "stop",
) -> Call:
    """Values from ``function(FeedBatch)``, ``batch`` at a time (see :class:`Call`)."""
    return Call(function, batch, on_end)


def function_name(function: str | Callable[..., Any]) -> str:
    """``"module:name"`` of a feeder's function, as written or as it pickles."""
    if isinstance(function, str):
        return function
    module = getattr(function, "__module__", "?")
    return f"{module}:{getattr(function, '__qualname__', repr(function))}"


_MAKER_NAMES: dict[type[Feeder], str] = {
    Count: "count",
    RandInt: "randint",
    Choice: "choice",
    Uuid4: "uuid4",
    CsvRows: "csv",
    JsonLines: "jsonl",
    Call: "call",
}


def describe(feeder: Feeder) -> dict[str, Any]:
    """``feeder.to_dict()``: its kind and its arguments, JSON-ready."""
    return {"kind": _MAKER_NAMES[type(feeder)], **_fields(feeder)}


def maker_name(feeder: Feeder) -> str:
    """The name of the function that makes the feeder: ``"csv"``, ``"count"``, ..."""
    return _MAKER_NAMES[type(feeder)]


def _fields(feeder: Feeder) -> dict[str, Any]:
    return {name: _plain(getattr(feeder, name)) for name in feeder.__dataclass_fields__}


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _tuple(values: Any) -> Any:
    """A list given as any iterable, as a tuple. A str (or bytes, or a number) is kept as
    it is, for the load's checks to refuse with what they got: ``choice("abc")`` means
    ``choice(["abc"])`` or ``choice(["a", "b", "c"])``, and only its writer knows which."""
    if isinstance(values, str | bytes):
        return values
    try:
        return tuple(values)
    except TypeError:
        return values
