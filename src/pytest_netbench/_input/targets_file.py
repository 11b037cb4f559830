"""A request mix from a file in vegeta's targets format (``vegeta attack -targets=FILE``).

A target is a ``METHOD URL`` line, then any ``Name: value`` header lines, then at most one
``@path/to/body`` line naming a file whose bytes are the body; blank lines may separate
targets, and a line starting with ``#`` is a comment. Each target becomes one
:class:`Request` of a mix sent in turn (``mix_order="cycle"``, as vegeta round-robins its
targets). Two additions vegeta ignores, so a file stays vegeta's: a ``# name: search``
comment names the next target (its figures are ``by_request.search...``), and the URL may be
a path alone (``GET /items``), for the server the load's URL names. vegeta's JSON form
(``-format=json``: an object a line, the body in base64) is read by
:func:`read_json_targets`.

What differs from vegeta, on purpose: a body file is read relative to the targets file's
folder (vegeta: the working directory; the same when both sit in the folder you run
from), and a target's URL must name the load's server (one server per load): the same
scheme, host and port as the load's URL, or a path alone.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from pathlib import Path

from pytest_netbench._errors import SpecError
from pytest_netbench._input.target import parse_http_url
from pytest_netbench._model import Request

# vegeta's own test for a target line: an upper-case word, then a space.
_TARGET_LINE = re.compile(r"^[A-Z]+\s")
_NAME_COMMENT = re.compile(r"^#\s*name:\s*(?P<name>\S.*?)\s*$")


def read_targets(path: Path, text: str, *, url: str | None) -> list[Request]:
    """The requests of a targets file (``path`` for the errors and body files, ``text``
    its contents), each target's URL checked against ``url`` (the load's) when given."""
    requests: list[tuple[Request, int]] = []  # each with its target line's number
    lines = text.splitlines()
    origin = _origin(url) if url is not None else None
    name = ""
    number = 0
    while number < len(lines):
        line = lines[number].strip()
        number += 1
        if not line:
            continue
        if line.startswith("#"):
            named = _NAME_COMMENT.match(line)
            if named:
                name = named["name"]
            continue
        where, start = f"{path}:{number}", number
        if not _TARGET_LINE.match(line):
            raise SpecError(
                f"{where}: expected a target line 'METHOD URL' (e.g. GET http://127.0.0.1:8080/"
                f"items, the method in capitals), got {line!r}"
            )
        method, target = line.split(None, 1)
        path_part, origin = _path_of(target.strip(), origin, path, number)
        headers: list[tuple[str, str]] = []
        body = b""
        while number < len(lines):
            extra = lines[number].strip()
            if not extra or _TARGET_LINE.match(extra):
                break
            number += 1
            if extra.startswith("#"):
                continue
            if extra.startswith("@"):
                body = _body(path, extra[1:].strip(), number)
                break
            key, sep, value = extra.partition(":")
            if not sep or not key.strip() or not value.strip():
                raise SpecError(
                    f"{path}:{number}: expected a header line 'Name: value', a body line"
                    f" '@file' or a blank line after the target on line {start},"
                    f" got {extra!r}"
                )
            headers.append((key.strip(), value.strip()))
        requests.append((Request(method, path_part, tuple(headers), body, name=name), start))
        name = ""
    if not requests:
        raise SpecError(
            f"{path}: no targets in the file: write one 'METHOD URL' line per target,"
            " e.g. GET http://127.0.0.1:8080/items"
        )
    return _distinct_names(requests)


def read_json_targets(path: Path, text: str, *, url: str | None) -> list[Request]:
    """The requests of vegeta's JSON targets (``vegeta attack -format=json``): one object
    a line, ``{"method": "GET", "url": "...", "header": {"Name": ["value"]}, "body":
    "<base64>"}``, checked as a targets file's lines are."""
    requests: list[tuple[Request, int]] = []
    origin = _origin(url) if url is not None else None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            target = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SpecError(f"{where}: not a JSON target: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise SpecError(f"{where}: not a JSON target: nested too deep to read") from None
        if not isinstance(target, dict) or not isinstance(target.get("url"), str):
            raise SpecError(f'{where}: a JSON target is {{"method": "GET", "url": "http://..."}}')
        unknown = sorted(set(target) - {"method", "url", "header", "body"})
        if unknown:
            raise SpecError(f"{where}: unknown key {unknown[0]!r} (a JSON target has method,"
                            " url, header, body)")  # fmt: skip
        method = target.get("method", "GET")
        if not isinstance(method, str) or not _TARGET_LINE.match(f"{method} "):
            raise SpecError(f"{where}: method must be a word in capitals, got {method!r}")
        path_part, origin = _path_of(target["url"], origin, path, number)
        requests.append(
            (
                Request(method, path_part, _json_headers(target.get("header"), where),
                        _json_body(target.get("body"), where)),
                number,
            )
        )  # fmt: skip
    if not requests:
        raise SpecError(f"{path}: no targets in the file")
    return _distinct_names(requests)


def _json_headers(header: object, where: str) -> tuple[tuple[str, str], ...]:
    if header is None:
        return ()
    if not isinstance(header, dict):
        raise SpecError(f'{where}: header must be {{"Name": ["value", ...]}}, got {header!r}')
    pairs = []
    for name, values in header.items():
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str):
                raise SpecError(f"{where}: header {name!r}: a value must be text, got {value!r}")
            pairs.append((name, value))
    return tuple(pairs)


def _json_body(body: object, where: str) -> bytes:
    if body is None:
        return b""
    if not isinstance(body, str):
        raise SpecError(f"{where}: body must be base64 text, as vegeta writes it, got {body!r}")
    try:
        return base64.b64decode(body, validate=True)
    except ValueError as exc:  # binascii.Error, or ValueError for a character not ASCII
        raise SpecError(f"{where}: body is not base64 ({exc})") from None


def _origin(url: str) -> tuple[str, str, int]:
    target = parse_http_url(url)
    return (target.scheme, target.host, target.port)


def _path_of(
    target: str, origin: tuple[str, str, int] | None, path: Path, number: int
) -> tuple[str, tuple[str, str, int] | None]:
    """The path (and query) of a target's URL, and the server it names (the first
    target's, when the load's URL was not given)."""
    if target.startswith("/"):
        return target, origin
    if "://" not in target:
        raise SpecError(
            f"{path}:{number}: the URL {target!r} is neither http://host:port/path nor a path"
            " starting with '/'"
        )
    parsed = parse_http_url(target) if _is_http(target) else None
    if parsed is None:
        raise SpecError(f"{path}:{number}: {target!r}: only http:// and https:// URLs can be sent")
    here = (parsed.scheme, parsed.host, parsed.port)
    if origin is not None and here != origin:
        scheme, host, port = origin
        raise SpecError(
            f"{path}:{number}: {target!r} is not on the load's server {scheme}://{host}:{port}"
            " (a load goes to one server): write the path alone (e.g. GET /items), or the"
            " same scheme, host and port"
        )
    return parsed.target, here


def _is_http(target: str) -> bool:
    return target.lower().startswith(("http://", "https://"))


def _body(path: Path, name: str, number: int) -> bytes:
    if not name:
        raise SpecError(f"{path}:{number}: '@' names no body file: write @path/to/body")
    return read_body_file(path, name, f"{path}:{number}")


def read_body_file(naming: Path, name: str, where: str) -> bytes:
    """The body in the file ``name``, relative to the folder of the file ``naming`` it (a
    targets file, a mix file); ``where`` begins the error that says it cannot be read."""
    file = naming.parent / name
    try:
        file = file.resolve()
        return file.read_bytes()
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        raise SpecError(
            f"{where}: cannot read the body file {name!r} (looked for {file}):"
            f" {getattr(exc, 'strerror', None) or exc}"
        ) from None


def _distinct_names(requests: list[tuple[Request, int]]) -> list[Request]:
    """Targets without a ``# name:`` are named ``METHOD /path``; two alike (a POST of two
    bodies) are told apart by their line: ``POST /orders (line 7)``."""
    labels = [request.label for request, _ in requests]
    out = []
    for (request, number), label in zip(requests, labels, strict=True):
        if not request.name and labels.count(label) > 1:
            request = dataclasses.replace(request, name=f"{label} (line {number})")
        out.append(request)
    return out
