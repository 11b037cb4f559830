"""The call shape every response framer shares, HTTP and raw TCP alike.

A framer is fed the bytes that arrived and calls ``on_response(code, keep_alive)`` once per
complete response (``code``: the HTTP status, or 0 / a negative verify code for TCP), or
``on_error(reason)`` once when the stream cannot be framed. The engine treats every framer
through this interface only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

OnResponse = Callable[[int, bool], None]
OnError = Callable[[str], None]


class Framer(Protocol):
    failed: bool

    def feed(self, data: bytes) -> None: ...

    def feed_eof(self) -> bool:
        """The peer closed; True if that completed a (close-delimited) response."""
        ...

    def release(self) -> None:
        """The connection is gone: drop what refers back to it or to this framer, so that
        refcounting frees both at once and no cyclic-GC pass has to find them (a load with
        a new connection per request would make one cycle per request)."""
        ...
