"""The lean client: httpx's common verbs at a fraction of its cost (``client="lean"``).

httpx spends about 200 µs of CPU per request building and parsing its models
(``benchmarks/bench_flow_client.py``), ten times the engine's whole cost; a flow that
only needs requests with headers, JSON or form bodies and query parameters, a cookie jar
and the answer's status, headers, text and JSON can use this client instead and keep the
same flow code: ``get``, ``post``, ``put``, ``patch``, ``delete``, ``head``, ``options``
and ``request`` take the same keywords (``params``, ``headers``, ``json``, ``data``,
``content``, ``cookies``, ``extensions``) and return a response with ``status_code``,
``headers``, ``content``, ``text``, ``json()``, ``is_success`` and ``raise_for_status()``.
It follows no redirects and keeps one cookie jar for the load's one origin.
"""

from __future__ import annotations

import json as json_module
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from pytest_netbench._flow.accounting import FlowAccounting
from pytest_netbench._flow.connection import RequestFailed, UserConnection
from pytest_netbench._flow.steps import STEP_EXTENSION, RequestFailure, SessionTrail, step_name
from pytest_netbench._proto.http import render_request
from pytest_netbench._public import publish

HeadersArg = Mapping[str, str] | list[tuple[str, str]] | None


class LeanRequestError(Exception):
    """A request of a lean client failed (``kind``: connect, reset, timeout, protocol);
    already counted under that kind."""

    def __init__(self, message: str, kind: str, step: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.step = step


class LeanStatusError(Exception):
    """``raise_for_status()`` of a 4xx or 5xx answer."""

    def __init__(self, message: str, response: LeanResponse) -> None:
        super().__init__(message)
        self.response = response


class LeanHeaders(Mapping[str, str]):
    """A response's header fields, names matched in any case (the last of a repeated one;
    ``get_list`` gives them all)."""

    __slots__ = ("_by_name", "raw")

    def __init__(self, raw: tuple[tuple[bytes, bytes], ...]) -> None:
        self.raw = raw
        self._by_name = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}

    def __getitem__(self, name: str) -> str:
        return self._by_name[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def get_list(self, name: str) -> list[str]:
        wanted = name.lower().encode("latin-1")
        return [v.decode("latin-1") for k, v in self.raw if k.lower() == wanted]


class LeanResponse:
    """One answer: ``status_code``, ``headers``, ``content``, ``text``, ``json()``."""

    __slots__ = ("content", "extensions", "headers", "method", "status_code", "url")

    def __init__(
        self, status: int, headers: LeanHeaders, content: bytes, method: str, url: str, step: str
    ) -> None:
        self.status_code = status
        self.headers = headers
        self.content = content
        self.method = method
        self.url = url
        self.extensions = {STEP_EXTENSION: step}

    @property
    def text(self) -> str:
        kind = self.headers.get("content-type", "")
        charset = kind.partition("charset=")[2].split(";")[0].strip() or "utf-8"
        return self.content.decode(charset, errors="replace")

    def json(self) -> Any:
        return json_module.loads(self.content)

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def is_error(self) -> bool:
        return self.status_code >= 400

    def raise_for_status(self) -> LeanResponse:
        if self.status_code >= 400:
            raise LeanStatusError(
                f"HTTP {self.status_code} for {self.method} {self.url}"
                f" ({self.extensions[STEP_EXTENSION]})",
                self,
            )
        return self

    def __repr__(self) -> str:
        return f"<LeanResponse [{self.status_code}]>"


class LeanClient:
    """One virtual user's lean client over its connection; ``headers`` and ``cookies``
    (a dict) go with every request."""

    def __init__(
        self, accounting: FlowAccounting, connection: UserConnection, trail: SessionTrail
    ) -> None:
        self._accounting = accounting
        self._connection = connection
        self._trail = trail
        self.headers: dict[str, str] = {}
        self.cookies: dict[str, str] = {}

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: HeadersArg = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        content: bytes | str | None = None,
        cookies: Mapping[str, str] | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> LeanResponse:
        method = method.upper()
        path, query = self._target(url)
        if params:
            query = f"{query}&{urlencode(params)}" if query else urlencode(params)
        fields = list(self.headers.items())
        fields += list(headers.items()) if isinstance(headers, Mapping) else list(headers or ())
        body = b""
        if json is not None:
            body = json_module.dumps(json, separators=(",", ":")).encode()
            fields.append(("Content-Type", "application/json"))
        elif data is not None:
            body = urlencode(data).encode()
            fields.append(("Content-Type", "application/x-www-form-urlencoded"))
        elif content is not None:
            body = content.encode() if isinstance(content, str) else content
        jar = {**self.cookies, **cookies} if cookies else self.cookies
        if jar:
            fields.append(("Cookie", "; ".join(f"{k}={v}" for k, v in jar.items())))
        target = f"{path}?{query}" if query else path
        self._trail.step = name = step_name(method, path, extensions)
        step = self._accounting.step(name, method, path)
        data_out = render_request(method, target, self._connection.host_header, fields, body)
        try:
            whole = await self._connection.exchange(data_out, method, step)
        except RequestFailed as exc:
            error = LeanRequestError(f"{exc.detail} ({name})", exc.kind, name)
            self._trail.failure = RequestFailure(error, exc.kind, name)
            raise error from None
        response_headers = LeanHeaders(whole.headers)
        for cookie in response_headers.get_list("set-cookie"):
            self._keep_cookie(cookie)
        return LeanResponse(whole.status, response_headers, whole.body, method, target, name)

    def _target(self, url: str) -> tuple[str, str]:
        """(path, query) of ``url``: a path, or an absolute URL of the load's origin."""
        if url.startswith(("http://", "https://")):
            parts = urlsplit(url)
            self._connection.check_origin(parts.scheme, parts.hostname or "", parts.port, url)
            return parts.path or "/", parts.query
        path, _, query = url.partition("?")
        return (path if path.startswith("/") else f"/{path}"), query

    def _keep_cookie(self, header: str) -> None:
        pair, _, attributes = header.partition(";")
        name, sep, value = pair.partition("=")
        if not sep:
            return
        name = name.strip()
        gone = any(
            a.strip().lower().replace(" ", "") in ("max-age=0", "max-age=-1")
            for a in attributes.split(";")
        )
        if gone:
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = value.strip()

    async def get(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("GET", url, **options)

    async def post(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("POST", url, **options)

    async def put(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("PUT", url, **options)

    async def patch(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("PATCH", url, **options)

    async def delete(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("DELETE", url, **options)

    async def head(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("HEAD", url, **options)

    async def options(self, url: str, **options: Any) -> LeanResponse:
        return await self.request("OPTIONS", url, **options)

    async def aclose(self) -> None:
        """Nothing to release: the run closes the user's connection."""


publish(globals())
