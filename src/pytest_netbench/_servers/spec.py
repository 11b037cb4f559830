"""How a server is described before it is started (catalog entries and user commands)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pytest_netbench._public import publish

AppKind = Literal["hello", "echo", "ws", "h2c", "h2", "grpc"]


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """A recipe that :meth:`pytest_netbench.Server.from_spec` starts.

    ``command`` is an argument list with ``{host}``, ``{port}`` and ``{python}``
    placeholders; ``port_pattern`` (a regex with one group) is given when the
    server binds port 0 and prints the port it got. ``ready_http2`` waits for the
    server's SETTINGS frame answering an HTTP/2 preface (over TLS with ALPN ``h2`` when
    ``tls``); ``tls`` makes the server's URL ``https://``.
    """

    name: str
    app: AppKind
    command: tuple[str, ...]
    protocol: Literal["http", "tcp"] = "http"
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    port_pattern: str | None = None
    ready_log: str | None = None
    ready_http_path: str | None = None
    ready_http2: bool = False
    tls: bool = False
    python: str | None = None
    startup_timeout_s: float = 30.0
    description: str = ""


publish(globals())
