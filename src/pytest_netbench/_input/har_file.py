"""A request mix from a HAR file (HTTP Archive 1.2): what a browser's developer tools save
("Save all as HAR"), or Playwright's ``record_har_path``, read as k6's har-to-k6 and
har2locust read one.

Each entry's request becomes one kind of the mix, in the order the browser made them
(sent in turn: ``mix_order="cycle"``): its method, its URL's path and query, the headers
the page sent, and its body (``postData.text``, or its form ``params`` encoded). Left out,
because the connection owns them: HTTP/2's pseudo-headers (``:authority`` ...), ``Host``,
``Content-Length``, ``Connection``, ``Keep-Alive``, ``Transfer-Encoding`` and
``Upgrade``. Entries that are not HTTP (``data:``, ``blob:``, an extension's) are skipped.

A page recorded in a browser often names more than its own server: fonts from a CDN,
analytics. netbench sends only to this machine unless told otherwise, and a load goes to
one server, so every entry must name the load's server (scheme, host and port): the
others are an error that lists them, the hosts not on this machine first, before any
request is sent.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from pytest_netbench._errors import SpecError
from pytest_netbench._input.target import is_loopback_literal, parse_http_url
from pytest_netbench._model import Request

# Headers a connection sets itself: never replayed from a recording.
_CONNECTION_HEADERS = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade"}
)


def looks_like_har(text: str) -> bool:
    """A JSON document whose top level is ``{"log": {...}}`` (a mix file's is ``{"mix":
    ...}``, vegeta's JSON targets an object a line)."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("log"), dict)


def read_har(path: Path, text: str, *, url: str | None) -> list[Request]:
    """The requests of the HAR file at ``path`` (``text`` its contents), each on the
    server of ``url`` (the load's; the first entry's when not given)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}: not a HAR file: {exc.msg} (line {exc.lineno})") from None
    log = data.get("log") if isinstance(data, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise SpecError(f'{path}: not a HAR file: no {{"log": {{"entries": [...]}}}} in it')
    origin = _origin_of(url) if url is not None else None
    requests: list[tuple[Request, int]] = []
    elsewhere: Counter[str] = Counter()
    for number, entry in enumerate(entries, 1):
        where = f"{path}: entry {number}"
        request = entry.get("request") if isinstance(entry, dict) else None
        if not isinstance(request, dict) or not isinstance(request.get("url"), str):
            raise SpecError(f"{where}: an entry has a request with a url")
        target = request["url"]
        if not target.lower().startswith(("http://", "https://")):
            continue  # data:, blob:, chrome-extension: nothing a server is asked for
        here = _origin_of(target)
        origin = origin or here
        if here != origin:
            elsewhere[_origin_text(here)] += 1
            continue
        parts = urlsplit(target)
        path_part = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        method = request.get("method", "GET")
        if not isinstance(method, str) or not method.isalpha():
            raise SpecError(f"{where}: method must be a word, got {method!r}")
        headers = _headers(request.get("headers"), where)
        body = _body(request.get("postData"), where)
        requests.append((Request(method.upper(), path_part, headers, body), number))
    if elsewhere:
        raise SpecError(_elsewhere_message(path, origin, elsewhere, len(requests)))
    if not requests:
        raise SpecError(f"{path}: no HTTP requests in the HAR file")
    return _distinct_names(requests)


def _origin_of(url: str) -> tuple[str, str, int]:
    target = parse_http_url(url)
    return (target.scheme, target.host, target.port)


def _origin_text(origin: tuple[str, str, int]) -> str:
    scheme, host, port = origin
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def _elsewhere_message(
    path: Path, origin: tuple[str, str, int] | None, elsewhere: Counter[str], kept: int
) -> str:
    remote = [o for o in elsewhere if not _on_this_machine(o)]
    listed = ", ".join(
        f"{o} ({n})" for o, n in sorted(elsewhere.items(), key=lambda i: (i[0] not in remote, i[0]))
    )
    server = _origin_text(origin) if origin else "the load's server"
    said = (
        f"{path}: {sum(elsewhere.values())} of {sum(elsewhere.values()) + kept} requests go to"
        f" other servers than {server}: {listed}. A load goes to one server"
    )
    if remote:
        said += ", and netbench sends only to this machine unless allowed (allow_remote)"
    return said + ": record the HAR against your server alone, or delete those entries"


def _on_this_machine(origin: str) -> bool:
    host = urlsplit(origin).hostname or ""
    return host == "localhost" or bool(is_loopback_literal(host))


def _headers(headers: object, where: str) -> tuple[tuple[str, str], ...]:
    if headers is None:
        return ()
    if not isinstance(headers, list):
        raise SpecError(f'{where}: headers must be a list of {{"name": ..., "value": ...}}')
    kept: list[tuple[str, str]] = []
    for header in headers:
        if not isinstance(header, dict):
            raise SpecError(f'{where}: a header is {{"name": ..., "value": ...}}, got {header!r}')
        name, value = header.get("name"), header.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise SpecError(f"{where}: a header's name and value are text, got {header!r}")
        if name.startswith(":") or name.lower() in _CONNECTION_HEADERS:
            continue
        kept.append((name, value))
    return tuple(kept)


def _body(post: object, where: str) -> bytes:
    if post is None:
        return b""
    if not isinstance(post, dict):
        raise SpecError(f"{where}: postData must be an object, got {post!r}")
    text = post.get("text")
    if isinstance(text, str):
        return text.encode()
    params = post.get("params")
    if isinstance(params, list):
        pairs: list[tuple[str, str]] = []
        for param in params:
            name = param.get("name") if isinstance(param, dict) else None
            value = param.get("value", "") if isinstance(param, dict) else None
            if not isinstance(name, str) or not isinstance(value, str):
                raise SpecError(
                    f'{where}: a form field is {{"name": ..., "value": ...}} of text, got {param!r}'
                )
            pairs.append((name, value))
        return urlencode(pairs).encode()
    return b""


def _distinct_names(requests: list[tuple[Request, int]]) -> list[Request]:
    """Each kind is named ``METHOD /path``; two alike (the same URL fetched twice) are told
    apart by their entry: ``GET /api/items (entry 7)``."""
    labels = [request.label for request, _ in requests]
    out = []
    for (request, number), label in zip(requests, labels, strict=True):
        if labels.count(label) > 1:
            request = dataclasses.replace(request, name=f"{label} (entry {number})")
        out.append(request)
    return out
