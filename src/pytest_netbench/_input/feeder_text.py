"""Feeders written as text or as data: a command line's ``--feeder id=count:1`` and a mix
file's ``{kind = "csv", path = "users.csv"}`` (or the same text, ``id = "count:1"``), each
made into the feeder its ``feeders.KIND(...)`` function returns.

Both forms name a feeder by its function (``count``, ``randint``, ``choice``, ``uuid4``,
``csv``, ``jsonl``, ``call``) and its arguments by their parameter names, so the Python
API, the files and the flags share one vocabulary (and ``Feeder.to_dict()`` reads back).
Only the form is checked here; the values are the load's to check (``_input.feeders``).
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pytest_netbench._errors import SpecError
from pytest_netbench._model import feeders
from pytest_netbench._model.feeders import Feeder

# kind -> the function making it
MAKERS: dict[str, Callable[..., Feeder]] = {
    "count": feeders.count,
    "randint": feeders.randint,
    "choice": feeders.choice,
    "uuid4": feeders.uuid4,
    "csv": feeders.csv,
    "jsonl": feeders.jsonl,
    "call": feeders.call,
}
# The parameters that name a file, read relative to the file that describes the feeder.
_PATHS = frozenset({"path"})
# How a flag's text becomes each parameter's value (the rest stay text).
_WHOLE = frozenset({"start", "step", "low", "high", "batch"})
_TEXT_LISTS = frozenset({"values", "columns"})
_NUMBER_LISTS = frozenset({"weights"})


def feeder_from_flag(text: str) -> tuple[str, Feeder]:
    """``"user=csv:users.csv:shuffle"`` -> ``("user", feeders.csv("users.csv",
    order="shuffle"))``. Arguments after the kind go to the function's parameters in order
    (``count:START:STEP``, ``csv:PATH:ORDER:ON_END``), or by name (``order=shuffle``);
    lists (``choice``'s values and weights, ``csv``'s columns) are comma-separated."""
    where = f"--feeder {text!r}"
    name, sep, description = text.partition("=")
    name = name.strip()
    if not sep or not name or not description:
        raise SpecError(f"{where}: write NAME=KIND[:ARG...], e.g. id=count:1 or rid=uuid4")
    return name, feeder_from_text(description, where=where)


def feeder_from_text(
    description: str, *, where: str, relative_to: str | os.PathLike[str] | None = None
) -> Feeder:
    """``"csv:users.csv:shuffle"``, the text after a flag's ``NAME=``, as a flag or a mix
    file writes it. ``relative_to``: the folder a relative ``path`` is read from (a mix
    file's; a flag's is the working directory's)."""
    kind, *parts = description.split(":")
    maker = _maker(kind.strip(), where)
    if kind.strip() == "call" and len(parts) >= 2 and "=" not in parts[1]:
        parts = [f"{parts[0]}:{parts[1]}", *parts[2:]]  # the function is "module:name"
    order = _parameters(maker)
    arguments: dict[str, Any] = {}
    named = False
    for position, part in enumerate(parts):
        key, eq, value = part.partition("=")
        key = key.strip()
        if eq and key.isidentifier():
            if key not in order:
                raise SpecError(f"{where}: {_unknown(kind, key, order)}")
            named = True
        elif named:
            raise SpecError(f"{where}: {part!r} follows a key=value argument: name it too")
        elif position < len(order):
            key, value = order[position], part
        else:
            takes = ", ".join(order) if order else "no arguments"
            raise SpecError(f"{where}: {kind} takes {takes}; got {len(parts)} arguments")
        if key in arguments:
            raise SpecError(f"{where}: {key} is given twice")
        arguments[key] = _from_text(key, value, where)
    if relative_to is not None:
        _resolve_paths(arguments, relative_to)
    return _made(maker, kind.strip(), arguments, where)


# How each file form writes a feeder, for the error that says what to write.
FEEDER_SHAPES: dict[str, str] = {
    "toml": 'a table with its kind, {kind = "count", start = 1}, or the text a --feeder'
    ' flag takes after NAME=, "count:1"',
    "json": 'an object with its kind, {"kind": "count", "start": 1}, or the text a'
    ' --feeder flag takes after NAME=, "count:1"',
}


def feeder_from_data(
    name: str,
    data: object,
    *,
    where: str,
    relative_to: str | os.PathLike[str] = ".",
    syntax: Literal["toml", "json"] = "toml",
) -> Feeder:
    """A feeder from a mapping: ``{"kind": "csv", "path": "users.csv", "order":
    "shuffle"}``, as a JSON or TOML mix file holds it (and ``Feeder.to_dict()`` writes it),
    or from the text a ``--feeder`` flag takes after ``NAME=`` (``"csv:users.csv:shuffle"``).
    A relative ``path`` is read from ``relative_to`` (the mix file's folder). ``where``
    says where the mapping was, and ``syntax`` the file's form, for the errors."""
    if isinstance(data, str):
        return feeder_from_text(data, where=where, relative_to=relative_to)
    if not isinstance(data, Mapping):
        raise SpecError(f"{where}: a feeder is {FEEDER_SHAPES[syntax]}; got {data!r}")
    arguments = dict(data)
    kind = arguments.pop("kind", None)
    if not isinstance(kind, str):
        raise SpecError(f"{where}: give the feeder's kind: one of {', '.join(MAKERS)}")
    maker = _maker(kind, where)
    known = _parameters(maker)
    for key in arguments:
        if key not in known:
            raise SpecError(f"{where}: {_unknown(kind, key, known)}")
    _resolve_paths(arguments, relative_to)
    return _made(maker, kind, arguments, where)


def _resolve_paths(arguments: dict[str, Any], relative_to: str | os.PathLike[str]) -> None:
    for key in _PATHS & arguments.keys():
        path = arguments[key]
        if isinstance(path, str) and not os.path.isabs(path):
            arguments[key] = os.path.join(relative_to, path)


def _maker(kind: str, where: str) -> Callable[..., Feeder]:
    maker = MAKERS.get(kind)
    if maker is None:
        close = difflib.get_close_matches(kind, list(MAKERS), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SpecError(f"{where}: no feeder kind {kind!r} ({hint}the kinds: {', '.join(MAKERS)})")
    return maker


def _parameters(maker: Callable[..., Feeder]) -> tuple[str, ...]:
    return tuple(inspect.signature(maker).parameters)


def _required(maker: Callable[..., Feeder]) -> tuple[str, ...]:
    parameters = inspect.signature(maker).parameters.values()
    return tuple(p.name for p in parameters if p.default is inspect.Parameter.empty)


def _unknown(kind: str, key: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    takes = ", ".join(known) if known else "nothing"
    return f"{kind} has no argument {key!r} ({hint}it takes {takes})"


def _made(maker: Callable[..., Feeder], kind: str, arguments: dict[str, Any], where: str) -> Feeder:
    missing = [key for key in _required(maker) if key not in arguments]
    if missing:
        raise SpecError(f"{where}: {kind} needs {', '.join(missing)}")
    try:
        return maker(**arguments)
    except TypeError as exc:  # a file's value of a type the function cannot take (path = 5)
        raise SpecError(f"{where}: {kind}: {exc}") from None


def _from_text(key: str, value: str, where: str) -> Any:
    value = value.strip()
    if key in _WHOLE:
        try:
            return int(value)
        except ValueError:
            raise SpecError(f"{where}: {key} must be a whole number, got {value!r}") from None
    if key in _TEXT_LISTS:
        return [item.strip() for item in value.split(",")]
    if key in _NUMBER_LISTS:
        try:
            return [float(item) for item in value.split(",")]
        except ValueError:
            raise SpecError(
                f"{where}: {key} must be numbers separated by commas, got {value!r}"
            ) from None
    return value
