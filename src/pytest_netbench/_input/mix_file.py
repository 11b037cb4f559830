"""A request mix from a file: :func:`load_mix`, for ``netbench http URL --mix FILE`` and for
Python (``http_load(url, **load_mix("mix.toml"))``).

Three forms, told apart by the file's suffix:

- ``.json`` and ``.toml``: the options of a load as Python writes them, ``mix`` (a list of
  requests: ``method``, ``path``, ``headers``, ``body`` or ``body_file``, ``name``,
  ``weight``), ``mix_order``, ``feeders`` (name -> ``{kind = "csv", path = ...}``, the
  function's arguments by name) and ``seed``;
- ``.har`` (or a ``.json`` file holding ``{"log": {"entries": ...}}``): a browser's
  recording, one kind per request it made (``har_file.py``);
- anything else: vegeta's targets format (``targets_file.py``); a ``.json`` file whose
  lines are objects with a ``url`` is vegeta's JSON targets format.

Relative paths in a file (body files, feeder files) are read from the file's folder. Every
error names the file and, where the format keeps it, the line: a syntax error's line and
column, a targets file's line, a JSON or TOML entry's place (``mix[2] ('order')``). The
values themselves (a feeder's range, a placeholder naming no feeder) are the load's to
check, as for any Python caller: ``http_spec`` says what is wrong.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pytest_netbench._errors import SpecError
from pytest_netbench._input.feeder_text import feeder_from_data
from pytest_netbench._input.har_file import looks_like_har, read_har
from pytest_netbench._input.options import HttpOptions
from pytest_netbench._input.targets_file import read_body_file, read_json_targets, read_targets
from pytest_netbench._model import Request
from pytest_netbench._model.checks import Check, checks_from
from pytest_netbench._model.feeders import Feeder
from pytest_netbench._public import publish

# The keys of a JSON or TOML mix file, and of each of its requests.
_FILE_KEYS = ("mix", "mix_order", "feeders", "seed", "checks")
_REQUEST_KEYS = ("method", "path", "headers", "body", "body_file", "name", "weight", "checks")
_EXAMPLE = '[[mix]] tables with a path each (TOML), or {"mix": [{"path": "/items"}]} (JSON)'


def load_mix(path: str | os.PathLike[str], *, url: str | None = None) -> HttpOptions:
    """The request mix a file describes, as the options of an HTTP load:
    ``http_load(url, **load_mix("mix.toml"))``.

    ``.json`` and ``.toml`` files give ``mix``, and may give ``mix_order``, ``feeders``
    and ``seed`` (docs/traffic.md shows both); any other file is read as vegeta's targets
    (``GET http://127.0.0.1:8080/items`` lines, header lines, ``@body-file``), and a
    ``.json`` file of ``{"method": ..., "url": ...}`` lines as vegeta's JSON targets. ``url``:
    the load's URL, which every absolute URL in a targets file must name the server of.
    A file that cannot be read or understood is a :class:`SpecError` naming the file and
    the line or entry."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(
            f"cannot read the mix file {os.fspath(path)!r}: {exc.strerror or exc}"
        ) from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{file}: not UTF-8 text ({exc})") from None
    suffix = file.suffix.lower()
    if suffix == ".har" or (suffix == ".json" and looks_like_har(text)):
        return {"mix": read_har(file, text, url=url)}
    if suffix == ".json":
        if _vegeta_json(text):
            return {"mix": read_json_targets(file, text, url=url)}
        return _from_data(file, _json(file, text))
    if suffix == ".toml":
        return _from_data(file, _toml(file, text))
    return {"mix": read_targets(file, text, url=url)}


def _vegeta_json(text: str) -> bool:
    """vegeta's JSON targets: an object a line, each with a "url" (a mix file has "mix")."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        target = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(target, dict) and "url" in target and "mix" not in target


def _json(file: Path, text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{file}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise SpecError(f"{file}: not JSON this parser can read: nested too deep") from None


def _toml(file: Path, text: str) -> object:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{file}: not TOML: {exc}") from None
    except RecursionError:
        raise SpecError(f"{file}: not TOML this parser can read: nested too deep") from None


def _from_data(file: Path, data: object) -> HttpOptions:
    if not isinstance(data, Mapping):
        raise SpecError(f"{file}: expected {_EXAMPLE}, got {type(data).__name__}")
    _check_keys(data, _FILE_KEYS, str(file))
    entries = data.get("mix")
    if not isinstance(entries, list) or not entries:
        raise SpecError(f"{file}: no requests: give {_EXAMPLE}")
    options: HttpOptions = {
        "mix": [_request(file, index, entry) for index, entry in enumerate(entries, 1)]
    }
    if "mix_order" in data:
        options["mix_order"] = data["mix_order"]
    if "seed" in data:
        options["seed"] = data["seed"]
    if "feeders" in data:
        options["feeders"] = _feeders(file, data["feeders"])
    if "checks" in data:
        options["checks"] = list(_checks(str(file), data["checks"]))
    return options


def _checks(where: str, given: object) -> tuple[Check, ...]:
    """``checks = ["status 200", "no error page: body !contains Error"]``, or a table of
    name = check (docs/checks.md)."""
    try:
        return checks_from(given)
    except SpecError as exc:
        raise SpecError(f"{where}: checks: {exc}") from None


def _request(file: Path, index: int, entry: object) -> Request:
    where = f"{file}: mix[{index}]"
    if not isinstance(entry, Mapping):
        raise SpecError(f"{where}: a request is a table with a path, got {entry!r}")
    if isinstance(entry.get("name"), str) and entry["name"]:
        where += f" ({entry['name']!r})"
    _check_keys(entry, _REQUEST_KEYS, where)
    path = entry.get("path")
    if not isinstance(path, str):
        raise SpecError(f'{where}: give its path, e.g. path = "/items"')
    method = entry.get("method", "GET")
    name = entry.get("name", "")
    weight = entry.get("weight", 1)
    for key, value in (("method", method), ("name", name)):
        if not isinstance(value, str):
            raise SpecError(f"{where}: {key} must be text, got {value!r}")
    if "body" in entry and "body_file" in entry:
        raise SpecError(f"{where}: give body or body_file, not both")
    return Request(
        method,
        path,
        _headers(where, entry.get("headers", {})),
        _body(file, where, entry),
        name=name,
        weight=weight,
        checks=_checks(where, entry["checks"]) if "checks" in entry else (),
    )


def _headers(where: str, headers: object) -> tuple[tuple[str, str], ...]:
    """A table of name -> value, or a list of [name, value] pairs (a header twice)."""
    pairs: list[Any]
    if isinstance(headers, Mapping):
        pairs = list(headers.items())
    elif isinstance(headers, list):
        pairs = headers
    else:
        raise SpecError(f"{where}: headers must be a table of name = value, got {headers!r}")
    out = []
    for pair in pairs:
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            raise SpecError(f"{where}: a header is a [name, value] pair, got {pair!r}")
        key, value = pair
        if not isinstance(key, str) or not isinstance(value, str | int | float):
            raise SpecError(f"{where}: header {key!r}: its value must be text, got {value!r}")
        out.append((key, str(value)))
    return tuple(out)


def _body(file: Path, where: str, entry: Mapping[str, Any]) -> bytes:
    if "body_file" in entry:
        name = entry["body_file"]
        if not isinstance(name, str) or not name:
            raise SpecError(f"{where}: body_file must be a file's path, got {name!r}")
        return read_body_file(file, name, where)
    body = entry.get("body", "")
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, Mapping | list):
        # A table or a list is sent as compact JSON, so a JSON body need not be quoted.
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    raise SpecError(f"{where}: body must be text, or a table sent as JSON; got {body!r}")


# How each form writes its feeders, for the error that says what to write.
_FEEDERS_EXAMPLE = {
    "toml": '[feeders] with a line per feeder, id = {kind = "count"} or id = "count:1"',
    "json": '{"feeders": {"id": {"kind": "count"}}} or {"feeders": {"id": "count:1"}}',
}


def _feeders(file: Path, feeders: object) -> dict[str, Feeder]:
    syntax: Literal["toml", "json"] = "json" if file.suffix.lower() == ".json" else "toml"
    if not isinstance(feeders, Mapping):
        raise SpecError(
            f"{file}: feeders maps each name to its feeder: {_FEEDERS_EXAMPLE[syntax]};"
            f" got {feeders!r}"
        )
    return {
        name: feeder_from_data(
            name, data, where=f"{file}: feeders.{name}", relative_to=file.parent, syntax=syntax
        )
        for name, data in feeders.items()
    }


def _check_keys(data: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise SpecError(f"{where}: unknown key {key!r} ({hint}the keys: {', '.join(known)})")


publish(globals())
