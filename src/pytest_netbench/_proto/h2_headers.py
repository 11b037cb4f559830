"""HPACK (RFC 7541) for the client's side of a load, with the ``hpack`` library.

A load's request header block is encoded **once**, every field a literal that is never
indexed (or an index into the static table), so the block touches no dynamic table and the
same bytes are valid on every stream of every connection: per request, nothing is encoded.
What that costs against indexing is in ``benchmarks/bench_hpack.py``: a repeated request
encoded with the dynamic table every time costs about as much CPU as the whole rest of a
request, to save a few dozen bytes of loopback traffic.

Responses must be decoded, every block, to keep the server's dynamic table in step with
ours. A server's answers to a fixed request repeat the same block bytes once its table
holds their fields (Go's net/http then sends one index per field), so
:class:`ResponseHeaderDecoder` keeps the status of each block it has decoded, by its bytes,
for as long as the dynamic table has not changed: a block that changes nothing decodes to
the same fields again, and any change clears what was kept. A block whose fields do not
depend on the table (``hpack_blocks.added_entries``: nginx sends every field as a new
indexed literal and never refers back) is kept for good with the entries it adds; seen
again, those entries wait in a short queue and enter the table only when a block that
needs the table is decoded (the table ends the same: only the newest entries that fit
are ever left in it). Against nginx this took decoding from about 40 us of a request's
CPU to nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import islice
from typing import cast
from urllib.parse import unquote

import hpack

from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._proto.h2_frames import COMPRESSION_ERROR, ConnectionViolation
from pytest_netbench._proto.hpack_blocks import added_entries

# Not allowed in HTTP/2 (RFC 9113 section 8.2.2): the connection carries what they said.
_CONNECTION_SPECIFIC = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"}
)
# How many blocks' statuses are kept before the cache starts again (a server whose every
# answer differs, such as one naming a request id, would otherwise grow it without end).
_CACHE_LIMIT = 64
_MAX_HEADER_LIST = 64 * 1024
_STATUS = b":status"
_GRPC_STATUS = b"grpc-status"
_GRPC_MESSAGE = b"grpc-message"
# gRPC's codes are small numbers; a longer run of digits is no code (and int() of thousands
# of digits raises).
_GRPC_DIGITS = 10
# An entry takes at least 32 bytes of the table (RFC 7541 section 4.1).
_ENTRY_OVERHEAD = 32

Field = tuple[bytes, bytes]


def encode_request_block(
    method: str,
    scheme: str,
    authority: str,
    path: str,
    headers: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The header block of one request, valid on any stream of any connection.

    ``headers`` are the request's own fields; ``host`` becomes ``:authority`` and the
    fields HTTP/2 forbids are refused with a ``ValueError`` naming them.
    """
    if not method or not method.isalpha():
        raise ValueError(f"HTTP method must be a token of letters, got {method!r}")
    if not path or " " in path:
        raise ValueError(f"request path must be non-empty with no spaces, got {path!r}")
    fields: list[tuple[str, str]] = []
    for name, value in headers:
        lowered = name.lower()
        if any(c in name + value for c in "\r\n\0") or ":" in name or not name:
            raise ValueError(f"header {name!r} is empty or holds a line break, NUL or colon")
        if lowered == "host":
            authority = value
        elif lowered == "te" and value.strip().lower() != "trailers":
            raise ValueError(f"header TE: {value!r} is not allowed in HTTP/2 (only 'trailers')")
        elif lowered in _CONNECTION_SPECIFIC:
            raise ValueError(
                f"header {name!r} is connection-specific, which HTTP/2 forbids: remove it"
            )
        else:
            fields.append((lowered, value))
    if not any(name == "user-agent" for name, _ in fields):
        fields.append(("user-agent", "netbench"))
    pseudo = [(":method", method.upper()), (":scheme", scheme), (":authority", authority)]
    pseudo.append((":path", path))
    never_indexed = [hpack.NeverIndexedHeaderTuple(n, v) for n, v in pseudo + fields]
    return hpack.Encoder().encode(never_indexed)


def encode_spec_request(spec: LoadSpec, request: Request | None = None) -> bytes:
    """The header block of a load's one request (method, URL, headers), or of the
    ``request`` kind of its mix (the load's headers too, but for those it names itself, as
    over HTTP/1.1), as :func:`encode_request_block` makes it: ``:authority`` is the host,
    with the port unless it is the scheme's default, as HTTP/1.1's Host header."""
    default_port = 443 if spec.scheme == "https" else 80
    host = f"[{spec.host}]" if ":" in spec.host else spec.host
    authority = host if spec.port == default_port else f"{host}:{spec.port}"
    method, path, headers, body = spec.method, spec.target, list(spec.headers), spec.body
    if request is not None:
        own = {name.lower() for name, _ in request.headers}
        headers = [(n, v) for n, v in headers if n.lower() not in own] + list(request.headers)
        method, path, body = request.method, request.path, request.body
    if body and not any(name.lower() == "content-length" for name, _ in headers):
        headers.append(("content-length", str(len(body))))
    return encode_request_block(method, spec.scheme, authority, path, headers)


def _length(value: int) -> bytes:
    """An HPACK integer with a 7-bit prefix and no Huffman flag (RFC 7541 section 5.1)."""
    if value < 127:
        return bytes((value,))
    out = bytearray((127,))
    value -= 127
    while value >= 128:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _never_indexed(name: bytes, value: bytes) -> bytes:
    """A literal field never indexed, its name a literal too, neither Huffman-coded."""
    return b"\x10" + _length(len(name)) + name + _length(len(value)) + value


def encode_rendered_request(data: bytes, scheme: str) -> tuple[bytes, bytes]:
    """The header block and body of a request rendered for HTTP/1.1 (by the request
    source of a load with feeders: ``_proto/source.py``), for an HTTP/2 stream: the request
    line's method and target become ``:method`` and ``:path``, ``Host`` ``:authority``,
    every other field a lower-case literal never indexed (no table, no Huffman: a few
    byte joins, as the request varies from one stream to the next). ``ValueError`` names
    what HTTP/2 cannot carry."""
    head, found, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    request_line = lines[0].split(b" ")
    if not found or len(request_line) != 3:
        raise ValueError(f"not an HTTP/1.1 request: {data[:60]!r}")
    method, path, _ = request_line
    authority = b""
    fields: list[bytes] = []
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"host":
            authority = value.strip()
        elif name.decode("latin-1") in _CONNECTION_SPECIFIC:
            raise ValueError(
                f"header {name!r} is connection-specific, which HTTP/2 forbids: remove it"
            )
        else:
            fields.append(_never_indexed(name, value.strip()))
    pseudo = (
        _never_indexed(b":method", method)
        + _never_indexed(b":scheme", scheme.encode("ascii"))
        + _never_indexed(b":authority", authority)
        + _never_indexed(b":path", path)
    )
    return pseudo + b"".join(fields), body


class ResponseHeaderDecoder:
    """One connection's HPACK decoder, reading the ``:status`` of each block (and, for
    gRPC, ``grpc-status`` and ``grpc-message``)."""

    __slots__ = (
        "_cache",
        "_decoder",
        "_grpc_cache",
        "_grpc_stateless",
        "_pending",
        "_stateless",
        "_table",
        "known",
    )

    def __init__(self) -> None:
        self._decoder = hpack.Decoder(max_header_list_size=_MAX_HEADER_LIST)
        self._table = self._decoder.header_table
        # Blocks that read the table but leave it as it is: valid until it changes.
        self._cache: dict[bytes, int] = {}
        # The same dict, for a caller's hot path: a block found here has the status it maps
        # to, exactly as status_of would say it (which looks here first), with nothing to
        # do to the table. Cleared in place, never replaced.
        self.known = self._cache
        self._grpc_cache: dict[bytes, tuple[int, int, str]] = {}
        # Blocks whose fields the table cannot change, with the entries each adds.
        self._stateless: dict[bytes, tuple[int, tuple[Field, ...]]] = {}
        self._grpc_stateless: dict[bytes, tuple[tuple[int, int, str], tuple[Field, ...]]] = {}
        # Entries added by kept blocks, not yet in the table: more than fill it never matter.
        most = self._decoder.max_allowed_table_size // _ENTRY_OVERHEAD + 1
        self._pending: deque[Field] = deque(maxlen=most)

    def status_of(self, block: bytes) -> int:
        """The ``:status`` of a complete header block: 0 if it has none (trailers, or a
        malformed response), -1 if it is not three digits. A block HPACK cannot decode
        breaks the whole connection: :class:`ConnectionViolation` with
        ``COMPRESSION_ERROR``."""
        status = self._cache.get(block)
        if status is not None:
            return status
        kept = self._stateless.get(block)
        if kept is not None:
            self._added(kept[1])
            return kept[0]
        fields, unchanged, adds = self._decode(block)
        status = _status_in(fields)
        if adds is not None:
            self._stateless[block] = (status, adds)
        elif unchanged:
            self._cache[block] = status
        return status

    def call_status_of(self, block: bytes) -> tuple[int, int, str]:
        """(``:status``, ``grpc-status``, ``grpc-message``) of a gRPC call's header block:
        ``:status`` as :meth:`status_of` reads it, ``grpc-status`` -1 when the block names
        none and -2 when its value is not a number, ``grpc-message`` "" when it names none.
        A call's every block is read here, and only here: each block is decoded once, as a
        block that adds entries must move the dynamic table once."""
        found = self._grpc_cache.get(block)
        if found is not None:
            return found
        kept = self._grpc_stateless.get(block)
        if kept is not None:
            self._added(kept[1])
            return kept[0]
        fields, unchanged, adds = self._decode(block)
        code, message = -1, ""
        for name, value in fields:
            if name == _GRPC_STATUS:
                code = int(value) if value.isdigit() and len(value) <= _GRPC_DIGITS else -2
            elif name == _GRPC_MESSAGE:
                message = unquote(value.decode("ascii", "replace"))
        read = (_status_in(fields), code, message)
        if adds is not None:
            self._grpc_stateless[block] = (read, adds)
        elif unchanged:
            self._grpc_cache[block] = read
        return read

    def _added(self, adds: tuple[Field, ...]) -> None:
        """A kept block added ``adds``: queued for the table, which has changed."""
        if adds:
            self._pending.extend(adds)
            self._cache.clear()
            self._grpc_cache.clear()

    def _decode(self, block: bytes) -> tuple[list[Field], bool, tuple[Field, ...] | None]:
        """The block's fields; whether decoding it left the dynamic table as it was (so
        what it says may be kept by its bytes until the table changes), any change
        forgetting all that was kept so; and, for a block whose fields the table cannot
        change, the entries it added (``None`` for any other block)."""
        table = self._table
        entries = table.dynamic_entries
        pending = self._pending
        if pending:
            add = table.add
            for name, value in pending:
                add(name, value)
            pending.clear()
        before = (len(entries), entries[0] if entries else None, table.maxsize)
        try:
            # raw=True: every name and value is bytes.
            fields = cast("list[Field]", self._decoder.decode(block, raw=True))
        except hpack.HPACKError as exc:
            raise ConnectionViolation(COMPRESSION_ERROR, f"bad HPACK header block: {exc}") from None
        after = (len(entries), entries[0] if entries else None, table.maxsize)
        unchanged = after[0] == before[0] and after[1] is before[1] and after[2] == before[2]
        kept = len(self._cache) + len(self._grpc_cache)
        if not unchanged or kept >= _CACHE_LIMIT:
            self._cache.clear()
            self._grpc_cache.clear()
        count = added_entries(block)
        adds: tuple[Field, ...] | None = None
        if count is not None and len(entries) >= count:
            # The newest entries are the block's own (an entry too large for the table
            # empties it, and then fewer are left than the block added).
            adds = tuple(reversed(list(islice(entries, count))))
            if len(self._stateless) + len(self._grpc_stateless) >= _CACHE_LIMIT:
                self._stateless.clear()
                self._grpc_stateless.clear()
        return fields, unchanged, adds


def _status_in(fields: list[Field]) -> int:
    """The first ``:status`` of a block's fields: 0 if none, -1 if not three digits."""
    for name, value in fields:
        if name == _STATUS:
            return int(value) if value.isdigit() and len(value) == 3 else -1
    return 0
