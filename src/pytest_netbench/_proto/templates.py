"""Request templates: a request with ``${name}`` placeholders, parsed once into fixed byte
segments and slots, rendered a batch at a time.

Sans-IO: bytes in, bytes out. The request is first rendered by :mod:`._proto.http` with
its placeholders still in it, so the request line, Host, User-Agent, the load's headers and
``Connection: close`` are laid out by the one function every load uses; the rendered head
is then cut at its placeholders. A batch of N requests is one ``bytes % tuple`` per request
(C code: no per-request Python beyond the call), over columns of values, one column a slot;
when the body varies, its Content-Length is computed for the whole batch by ``map(len, ...)``.

Syntax: ``${name}`` or ``${name.field}`` (a column of a CSV row, a field of a JSON line);
``$${`` writes a literal ``${``; every other ``$`` and every brace is itself, so a JSON
body needs no escaping. The braced form of Python's ``string.Template``, as k6's template
literals and JMeter write it. Placeholders go in the path (and query), header values and
the body, never in the method or a header name.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from operator import add
from typing import Any, Literal
from urllib.parse import quote_from_bytes

import httptools

from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._proto import http as http_proto

Region = Literal["target", "header", "body"]

_OPENING = re.compile(rb"\$\$\{|\$\{")
_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\.([^{}$]+))?\Z")
# What a request target may hold as it is (RFC 3986: unreserved, sub-delims, ":@/?"), and
# "%" so that values already percent-encoded go as they are; the rest of a path value is
# percent-encoded.
_TARGET_SAFE = b"!$&'()*+,;=:@/?%-._~"
_TARGET_AS_IS = bytes(range(0x30, 0x3A)) + bytes(range(0x41, 0x5B)) + bytes(range(0x61, 0x7B))
_TARGET_AS_IS += _TARGET_SAFE
# What a header value may hold (what llhttp reads in one): all but the control characters
# other than HTAB, and DEL. Deleting these from values leaves what they must not hold.
_HEADER_ALLOWED = bytes(b for b in range(256) if b == 0x09 or 0x20 <= b != 0x7F)


class TemplateError(ValueError):
    """A template that cannot be parsed, or a value that cannot go where its slot is."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One placeholder: the feeder it names, the field of that feeder's row (None: the
    value itself) and where in the request it is."""

    feeder: str
    field: str | None
    region: Region = "body"

    @property
    def text(self) -> str:
        return "${" + self.feeder + (f".{self.field}" if self.field is not None else "") + "}"


def parse(text: bytes) -> tuple[tuple[bytes, ...], tuple[Slot, ...], tuple[int, ...]]:
    """``text`` cut at its placeholders: the fixed segments (one more than the slots, the
    ``$${`` escapes written as ``${``), the slots, and where each slot began in ``text``."""
    segments: list[bytes] = []
    slots: list[Slot] = []
    offsets: list[int] = []
    current: list[bytes] = []
    pos = 0
    while (found := _OPENING.search(text, pos)) is not None:
        current.append(text[pos : found.start()])
        if found.group() == b"$${":
            current.append(b"${")
            pos = found.end()
            continue
        close = text.find(b"}", found.end())
        if close < 0:
            raise TemplateError(
                f"an unclosed ${{ in {_excerpt(text, found.start())}: a placeholder is"
                " ${name} or ${name.field}; write $${ for a literal ${"
            )
        inner = text[found.end() : close].decode("utf-8", "replace")
        name = _NAME.match(inner)
        if name is None:
            raise TemplateError(
                f"${{{inner}}} is not a placeholder: a placeholder is ${{name}} or"
                " ${name.field}, the name a feeder's; write $${ for a literal ${"
            )
        segments.append(b"".join(current))
        current = []
        slots.append(Slot(name.group(1), name.group(2)))
        offsets.append(found.start())
        pos = close + 1
    current.append(text[pos:])
    segments.append(b"".join(current))
    return tuple(segments), tuple(slots), tuple(offsets)


def has_placeholder(text: bytes) -> bool:
    """Whether ``text`` holds a ``${`` that is not written ``$${``."""
    return any(m.group() == b"${" for m in _OPENING.finditer(text))


def _excerpt(text: bytes, at: int) -> str:
    return repr(text[max(0, at - 20) : at + 30].decode("utf-8", "replace"))


@dataclass(frozen=True, slots=True)
class RequestTemplate:
    """One kind of request, parsed: ``fixed`` when nothing in it varies, else a bytes
    ``format`` whose arguments are the slots' values in order (the head's, then, when the
    body varies, its Content-Length, then the body's).

    ``int_slots``: the slots whose values are whole numbers (``%d`` in the head, turned
    into bytes for the body, whose length they count in)."""

    slots: tuple[Slot, ...]
    format: bytes
    fixed: bytes | None
    head_slots: int
    body_length: int  # the fixed part of a varying body
    int_slots: frozenset[int]

    @property
    def feeders(self) -> frozenset[str]:
        return frozenset(slot.feeder for slot in self.slots)

    def render(self, columns: Sequence[Sequence[Any]], n: int) -> list[bytes]:
        """``n`` requests, the *j*-th with the *j*-th value of each slot's column."""
        if self.fixed is not None:
            return [self.fixed] * n
        ints = self.int_slots
        args: list[Sequence[Any]] = []
        for index, (slot, column) in enumerate(zip(self.slots, columns, strict=True)):
            if index in ints:
                args.append(_decimal(column) if slot.region == "body" else column)
            elif slot.region == "target":
                args.append(_encoded_target(column, slot))
            else:
                if slot.region == "header":
                    _check_header_values(column, slot)
                args.append(column)
        head = self.head_slots
        if head == len(args):
            return list(map(self.format.__mod__, zip(*args, strict=True)))
        body = args[head:]
        lengths = map(len, body[0])
        for column in body[1:]:
            lengths = map(add, lengths, map(len, column))
        lengths = map(self.body_length.__add__, lengths)
        return list(map(self.format.__mod__, zip(*args[:head], lengths, *body, strict=True)))


def request_template(
    spec: LoadSpec, request: Request | None, int_feeders: Collection[str] = ()
) -> RequestTemplate:
    """The template of a load's request (or of the ``request`` kind of its mix).

    :class:`TemplateError` says what cannot be a template; ``ValueError`` from
    :func:`~._proto.http.render_request`, what in the fixed parts cannot be sent."""
    body = request.body if request is not None else spec.body
    body_segments, body_slots, _ = parse(body)
    if body_slots:
        names = {name.lower() for name, _ in _headers_of(spec, request)}
        for fixed in ("content-length", "transfer-encoding"):
            if fixed in names:
                raise TemplateError(
                    f"the body has placeholders, so its Content-Length is computed for each"
                    f" request: drop the {fixed.title()} header"
                )
        head = _render(spec, request, b"")[:-2]  # without the blank line that ends it
        fixed_body = b""
    else:
        rendered = _render(spec, request, body_segments[0])
        end = rendered.index(b"\r\n\r\n") + 4
        head, fixed_body = rendered[:end], rendered[end:]
    segments, head_slots, offsets = parse(head)
    slots = tuple(
        dataclasses.replace(slot, region=_region(head, at, slot))
        for slot, at in zip(head_slots, offsets, strict=True)
    ) + tuple(body_slots)
    if not slots:
        return RequestTemplate((), b"", segments[0] + fixed_body, 0, 0, frozenset())
    int_slots = frozenset(i for i, slot in enumerate(slots) if slot.feeder in int_feeders)
    pieces = [_literal(segments[0])]
    for index, segment in enumerate(segments[1:]):
        pieces.append(b"%d" if index in int_slots else b"%s")
        pieces.append(_literal(segment))
    if body_slots:
        pieces.append(b"Content-Length: %d\r\n\r\n" + _literal(body_segments[0]))
        for segment in body_segments[1:]:
            pieces.append(b"%s" + _literal(segment))
    else:
        pieces.append(_literal(fixed_body))
    return RequestTemplate(
        slots,
        b"".join(pieces),
        None,
        len(head_slots),
        sum(map(len, body_segments)),
        int_slots,
    )


def _render(spec: LoadSpec, request: Request | None, body: bytes) -> bytes:
    if request is not None:
        return http_proto.render_spec_request(spec, dataclasses.replace(request, body=body))
    return http_proto.render_spec_request(dataclasses.replace(spec, body=body))


def _headers_of(spec: LoadSpec, request: Request | None) -> tuple[tuple[str, str], ...]:
    return spec.headers + (request.headers if request is not None else ())


def request_problem(data: bytes) -> str:
    """Why ``data`` is not one complete HTTP/1.1 request ("" when it is), as llhttp reads it."""
    done: list[bool] = []

    class _Complete:
        def on_message_complete(self) -> None:
            done.append(True)

    try:
        httptools.HttpRequestParser(_Complete()).feed_data(data)
    except httptools.HttpParserUpgrade:
        return ""  # a whole request asking to switch protocols (a WebSocket handshake)
    except httptools.HttpParserError as exc:
        return str(exc) or type(exc).__name__
    if done != [True]:
        return "the request is incomplete" if not done else "more than one request"
    return ""


def _region(head: bytes, at: int, slot: Slot) -> Region:
    """Where in a rendered head the placeholder at ``at`` is; only the target and header
    values may vary."""
    line_start = head.rfind(b"\r\n", 0, at) + 2 if b"\r\n" in head[:at] else 0
    line_end = head.find(b"\r\n", at)
    line = head[line_start:line_end]
    column = at - line_start
    if line_start == 0:
        if line.find(b" ") < column < line.rfind(b" "):
            return "target"
        where = "the method"
    elif column > line.find(b":"):
        return "header"
    else:
        where = "a header name"
    raise TemplateError(
        f"{slot.text} is in {where}: placeholders go in the path, header values and body"
    )


def _literal(segment: bytes) -> bytes:
    return segment.replace(b"%", b"%%")


def _decimal(column: Sequence[int]) -> list[bytes]:
    return list(map(str.encode, map(str, column)))


def _encoded_target(column: Sequence[bytes], slot: Slot) -> Sequence[bytes]:
    """A column of path values, percent-encoded where a request target needs it (a space
    becomes %20; a "%" stays, so encoded values go as they are)."""
    try:
        joined = b"".join(column)
    except TypeError:
        raise TemplateError(f"{slot.text}: a value that is not bytes") from None
    if not joined.translate(None, _TARGET_AS_IS):
        return column
    return [
        v if not v.translate(None, _TARGET_AS_IS) else quote_from_bytes(v, _TARGET_SAFE).encode()
        for v in column
    ]


def _check_header_values(column: Sequence[bytes], slot: Slot) -> None:
    if b"".join(column).translate(None, _HEADER_ALLOWED):
        value = next(v for v in column if v.translate(None, _HEADER_ALLOWED))
        raise TemplateError(
            f"{slot.text} gave {value[:60]!r} for a header value, which cannot hold"
            " a line break (CR, LF), NUL or another control character but HTAB"
        )
