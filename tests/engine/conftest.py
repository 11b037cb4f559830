"""Fixtures of the engine conformance suite: in-process test servers and a TLS certificate
(the loop matrix, `loop`, and `consistent` live in tests/conftest.py)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import EchoApp, EchoOptions, HttpApp, HttpOptions, ServerThread, StartEcho, StartHttp


@pytest.fixture(autouse=True)
def _bounded(hang_guard: None) -> None:
    """No engine test may hang the suite."""


@pytest.fixture
def http_server() -> Iterator[StartHttp]:
    """``http_server(framing=..., ssl_context=...)`` -> (running server, app with counters)."""
    started: list[ServerThread] = []

    def start(
        ssl_context: ssl.SSLContext | None = None, **options: object
    ) -> tuple[ServerThread, HttpApp]:
        app = HttpApp(HttpOptions(**options))  # type: ignore[arg-type]
        server = ServerThread(app, ssl_context=ssl_context).start()
        started.append(server)
        return server, app

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def echo_server() -> Iterator[StartEcho]:
    started: list[ServerThread] = []

    def start(**options: int) -> tuple[ServerThread, EchoApp]:
        app = EchoApp(EchoOptions(**options))
        server = ServerThread(app).start()
        started.append(server)
        return server, app

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 made at test time with the openssl CLI (key, cert)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the TLS tests need the openssl command line tool on PATH")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )  # fmt: skip
    return key, cert


@pytest.fixture
def tls_context(self_signed: tuple[Path, Path]) -> ssl.SSLContext:
    key, cert = self_signed
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context
