"""The checks of a WebSocket load's own options (``ws_spec`` runs them before any socket):
its URL, its message and what answers it, the subprotocols and headers its handshake
sends, and a listen load's options."""

from __future__ import annotations

import json
import string
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._input.target import HttpTarget, parse_url
from pytest_netbench._model import WS_ANSWERS, WsAnswer
from pytest_netbench._proto.templates import request_problem
from pytest_netbench._proto.websocket import new_key, render_handshake
from pytest_netbench._proto.ws_template import IdTemplate

# The handshake's own headers: one given again would make a request the server may refuse.
_HANDSHAKE_HEADERS = frozenset(
    {"host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version"}
)
# A subprotocol is an HTTP token (RFC 6455 section 4.1, RFC 7230 section 3.2.6).
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~")


def parse_ws_url(url: str) -> HttpTarget:
    """``ws://`` or ``wss://host[:port]/path?query`` as a target (``scheme`` ``"ws"`` or
    ``"wss"``)."""
    return parse_url(
        url,
        ("ws", "wss"),
        "a WebSocket URL is ws:// or wss:// (a managed server's is server.ws_url)",
    )


def checked_message(message: object, size: object, binary: bool) -> tuple[bytes, bool]:
    """The message's bytes and whether it goes as binary: a ``str`` is text (unless
    ``binary``), ``bytes`` binary; none given: ``size`` bytes of letters."""
    if message is None:
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise SpecError(f"message_bytes must be a positive whole number, got {size!r}")
        letters = string.ascii_lowercase.encode()
        return bytes(letters[i % 26] for i in range(size)), binary
    if isinstance(message, str):
        return message.encode("utf-8"), binary
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message), True
    raise SpecError(f"message must be str (text) or bytes (binary), got {type(message).__name__}")


def checked_subprotocols(value: object) -> tuple[str, ...]:
    """Subprotocol names from a list or a comma-separated string, each an HTTP token."""
    if value is None:
        return ()
    if isinstance(value, str):
        names = [name.strip() for name in value.split(",") if name.strip()]
    elif isinstance(value, Sequence):
        names = [str(name) for name in value]
    else:
        raise SpecError(f"subprotocols must be a list of names, got {value!r}")
    for name in names:
        if not name or not set(name) <= _TOKEN_CHARS:
            raise SpecError(
                f"subprotocol {name!r} is not a valid name: letters, digits and !#$%&'*+-.^_`|~"
                " only (no spaces or commas)"
            )
    if len(set(names)) != len(names):
        raise SpecError(f"subprotocols names one twice: {', '.join(names)}")
    return tuple(names)


def check_handshake_headers(headers: Sequence[tuple[str, str]]) -> None:
    for name, value in headers:
        key = name.strip().lower()
        if not key or any(c in name + value for c in "\r\n"):
            raise SpecError(
                f"header {name!r}: a name must be non-empty, and neither may hold CR or LF"
            )
        if key == "sec-websocket-protocol":
            raise SpecError(
                "offer subprotocols with subprotocols=, not a Sec-WebSocket-Protocol header"
            )
        if key in _HANDSHAKE_HEADERS:
            raise SpecError(f"header {name!r} is the WebSocket handshake's own: leave it out")


def check_handshake(
    target: str, headers: Sequence[tuple[str, str]], subprotocols: Sequence[str]
) -> None:
    """The upgrade request rendered once, as each connection renders it: a character it
    cannot carry (not latin-1), or what llhttp refuses (a space in the path or in a header's
    name, a control character), fails here rather than at every connection."""
    try:
        request = render_handshake("127.0.0.1", target, new_key(), subprotocols, headers)
    except UnicodeEncodeError as exc:
        raise SpecError(f"the WebSocket handshake cannot be sent: {exc}") from None
    problem = request_problem(request)
    if problem:
        raise SpecError(
            f"the WebSocket handshake is not valid HTTP/1.1 ({problem}): {request[:200]!r}"
        )


def checked_answer(
    values: Mapping[str, Any], given: Collection[str], message: bytes, binary: bool
) -> tuple[WsAnswer, str | None, bytes, int]:
    """What answers a message (``answer``), its id field, the message (with ids: a JSON
    object, the default one built around the field) and the messages a connection keeps
    outstanding (``pipeline``: with ids only)."""
    answer = values["answer"]
    if answer not in WS_ANSWERS:
        raise SpecError(f"answer must be one of {', '.join(WS_ANSWERS)}, got {answer!r}")
    field, pipeline = values["id_field"], values["pipeline"]
    if answer != "id":
        if field is not None:
            raise SpecError(
                "id_field names where answers carry their message's id: add answer='id'"
            )
        if "pipeline" in given and pipeline != 1:
            raise SpecError(
                "several WebSocket messages outstanding on a connection need answers matched"
                " by id: add answer='id' (and id_field=), or drop pipeline"
            )
        return answer, None, message, 1
    if field is None:
        field = "id"
    if not isinstance(field, str) or not field:
        raise SpecError(f"id_field must be the name of a JSON field, got {field!r}")
    if binary:
        raise SpecError("with answer='id' messages are JSON text: drop binary")
    if values["message"] is None:  # message_bytes letters under "data", beside the id
        message = json.dumps({field: 0, "data": message.decode("ascii")}).encode()
    try:
        IdTemplate.from_message(message.decode("utf-8"), field)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    return answer, field, message, pipeline


# The options only a listen load reads, and the ones it has no use for (it sends nothing).
_LISTEN_ONLY = ("ping_every", "stamp_field", "stamp_binary")
_MESSAGE_OPTIONS = ("message", "message_bytes", "binary", "answer", "id_field", "pipeline")


def checked_listen(values: Mapping[str, Any], given: Collection[str]) -> bool:
    """Whether the load listens (``listen``), its own options checked: ``values`` every
    option with its default, ``given`` the names the caller gave."""
    if not values["listen"]:
        for name in _LISTEN_ONLY:
            if values[name] not in (None, False):
                raise SpecError(
                    f"{name} is an option of a listen load (held connections, the server's"
                    " pushes counted): add listen=True (CLI: --listen)"
                )
        return False
    if values["rate"] is not None:
        raise SpecError(
            "a listen load holds its connections and sends no messages, so it has no rate:"
            " drop rate (connect_rate paces the connects)"
        )
    for name in _MESSAGE_OPTIONS:
        if name in given:
            raise SpecError(f"a listen load sends no messages: drop {name}")
    every = values["ping_every"]
    if every is not None and (
        isinstance(every, bool) or not isinstance(every, int | float) or not every > 0
    ):
        raise SpecError(f"ping_every must be a positive number of seconds, got {every!r}")
    field = values["stamp_field"]
    if field is not None and (not isinstance(field, str) or not field):
        raise SpecError(f"stamp_field must be the name of a JSON field, got {field!r}")
    if field is not None and values["stamp_binary"]:
        raise SpecError(
            "a push's stamp is a JSON field (stamp_field) or its first 8 bytes"
            " (stamp_binary), not both: drop one"
        )
    return True
