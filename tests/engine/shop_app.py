"""A small shop for the user-flow tests: login, a session cookie, a bearer token, orders.

``POST /login`` with ``{"user": ..., "pw": ...}`` answers ``{"token": ...}`` and sets a
``sid`` cookie; ``GET /items`` and ``POST /orders`` need both the cookie and
``Authorization: Bearer <token>`` of one login (401 otherwise). The shop counts what it
saw, so a test can tell that a flow carried its credentials: ``without_credentials`` (a
request to a protected route missing the cookie or the token) must stay 0 for a good flow,
``rejected`` counts requests whose credentials were present but wrong. A user named
``mallory`` gets a token the shop then refuses. ``GET /drop`` closes the connection
unanswered. Served by ``servers.ServerThread`` on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ShopCounts:
    """Written only by the server's loop thread; read after the load."""

    by_route: Counter[str] = field(default_factory=Counter)
    logins: int = 0
    orders: int = 0
    without_credentials: int = 0
    rejected: int = 0
    connections: int = 0


class ShopApp:
    def __init__(self) -> None:
        self.counts = ShopCounts()
        self._sessions: dict[str, str] = {}  # sid -> token
        self._ids = itertools.count(1)

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.counts.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line, *fields = head.decode("latin-1").split("\r\n")
                method, target, _ = line.split(" ", 2)
                headers: dict[str, str] = {}
                for text in fields:
                    if text:
                        name, _, value = text.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                route = f"{method} {target.split('?')[0]}"
                self.counts.by_route[route] += 1
                if route == "GET /drop":
                    writer.close()
                    return
                status, extra, payload = self._answer(route, headers, body)
                writer.write(_response(status, extra, payload))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def _answer(
        self, route: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        if route == "POST /register":  # as a form's POST in Flask's tutorial: see /login
            return 303, [("Location", "/login")], b""
        if route == "GET /login":
            return 200, [], b'{"form": "login"}'
        if route == "POST /login":
            user = json.loads(body)["user"]
            number = next(self._ids)
            sid, token = f"s{number}", f"t{number}-{user}"
            self._sessions[sid] = "refused" if user == "mallory" else token
            self.counts.logins += 1
            cookie = [("Set-Cookie", f"sid={sid}; Path=/; HttpOnly")]
            return 200, cookie, json.dumps({"token": token}).encode()
        if route in ("GET /items", "POST /orders"):
            sid = _cookie(headers.get("cookie", ""), "sid")
            auth = headers.get("authorization", "")
            if not sid or not auth.startswith("Bearer "):
                self.counts.without_credentials += 1
                return 401, [], b'{"error": "log in first"}'
            if self._sessions.get(sid) != auth.removeprefix("Bearer "):
                self.counts.rejected += 1
                return 401, [], b'{"error": "bad token"}'
            if route == "GET /items":
                return 200, [], b'[{"id": 1, "name": "tea"}, {"id": 2, "name": "cup"}]'
            self.counts.orders += 1
            return 201, [], json.dumps({"order": self.counts.orders}).encode()
        return 404, [], b'{"error": "no such route"}'


def _cookie(header: str, name: str) -> str:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


_REASONS = {200: "OK", 201: "Created", 303: "See Other", 401: "Unauthorized", 404: "Not Found"}


def _response(status: int, extra: list[tuple[str, str]], payload: bytes) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS[status]}", "Content-Type: application/json"]
    lines += [f"{name}: {value}" for name, value in extra]
    lines.append(f"Content-Length: {len(payload)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
