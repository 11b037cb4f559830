"""A target nothing can reach: the load ends within a fraction of a second with one clear
error instead of refusing connects for its whole duration; on every loop, in closed and
open loop, with one worker or several. A server that starts listening late, or a load
where connects succeed, is never stopped by that rule. ``https://`` against a plain-HTTP
port says so, in one error and nothing else."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import socket
import threading
import time
from collections.abc import Callable

import pytest
from servers import HOST, HttpApp, HttpOptions, PreparedSocketServer, ServerThread

from pytest_netbench import LoadResult, TargetUnreachableError, echo_load, http_load

Check = Callable[[LoadResult], LoadResult]
# Each load here stops as soon as it finds nothing to measure, far inside this window; its
# length is room for a busy machine (100 refused TLS handshakes once took 3 s beside other
# tests) while still telling an early stop from a load that ran its time.
WINDOW_S = 20.0


def closed_port() -> int:
    """A loopback port nothing listens on (bound, its number read, closed)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
    return port


def attempts_in(error: pytest.ExceptionInfo[TargetUnreachableError]) -> int:
    match = re.search(r"\(([\d,]+) attempts", str(error.value))
    assert match is not None, str(error.value)
    return int(match.group(1).replace(",", ""))


@pytest.mark.parametrize(
    "options",
    [{"connections": 10}, {"rate": 1000.0}, {"connections": 10, "connect_first": True}],
    ids=["closed", "open", "connect-first"],
)
def test_nothing_listening_ends_the_load_at_once(loop: str, options: dict[str, object]) -> None:
    """A closed loop of 10 connections made 110,450 attempts in a 2 s window before
    asking; now the question comes within a fraction of the window."""
    if options.get("connect_first") and loop == "trio":
        pytest.skip("connect_first runs on the asyncio loops")
    url = f"http://{HOST}:{closed_port()}/"
    began = time.monotonic()
    with pytest.raises(TargetUnreachableError, match="is the server running") as error:
        http_load(url, loop=loop, duration=WINDOW_S, **options)  # type: ignore[arg-type]
    assert time.monotonic() - began < WINDOW_S / 2
    assert "connection refused" in str(error.value)
    assert 0 < attempts_in(error) < 1000


def test_nothing_listening_ends_an_echo_load_of_two_workers() -> None:
    began = time.monotonic()
    with pytest.raises(TargetUnreachableError, match="is the server running") as error:
        echo_load(HOST, closed_port(), connections=10, duration=WINDOW_S, workers=2)
    assert "\n" not in str(error.value)  # the share's own error, not a worker failure
    assert time.monotonic() - began < WINDOW_S
    assert 0 < attempts_in(error) < 1000


class LateListener(PreparedSocketServer):
    """A port that refuses connects (bound, not listening) until ``after_s``, then serves
    ``app``."""

    def __init__(self, app: HttpApp, after_s: float) -> None:
        super().__init__(app)
        self.after_s = after_s
        self.listening = threading.Event()

    async def _serve(self) -> None:
        await asyncio.sleep(self.after_s)
        server = await asyncio.start_server(self._client, sock=self.sock, backlog=128)
        self.listening.set()
        await self._until_stopped()
        server.close()


def test_a_server_that_starts_listening_late_is_measured(loop: str, consistent: Check) -> None:
    """Refused for its first 0.1 s: the load goes on, and those refusals count as errors."""
    with LateListener(HttpApp(HttpOptions()), after_s=0.1) as server:
        r = consistent(http_load(f"http://{HOST}:{server.port}/", loop=loop, duration=0.6))
        assert server.listening.is_set()
    assert r.ok > 0
    assert r.errors["connect"] > 0
    assert "refused" in r.error_samples["connect"]


def test_refusals_after_a_connect_succeeded_never_stop_the_load(loop: str) -> None:
    """The server goes away mid-load: every later connect is refused, yet the load runs
    its window (the rule is for a target never reached)."""
    with LateListener(HttpApp(HttpOptions(framing="connection-close")), after_s=0) as server:
        server.listening.wait(5)
        stopper = threading.Timer(0.2, server.__exit__)
        stopper.start()
        try:
            began = time.monotonic()
            r = http_load(f"http://{HOST}:{server.port}/", loop=loop, duration=1.0)
        finally:
            stopper.cancel()
    assert time.monotonic() - began >= 1.0
    assert r.ok > 0
    assert r.errors["connect"] > 0


async def answer_400(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A plain-HTTP server's answer to bytes that are no request (a TLS hello), as
    uvicorn's or aiohttp's: 400, then close."""
    await reader.read(1)
    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    await writer.drain()


@pytest.mark.parametrize("verify_tls", [True, False], ids=["verify", "no-verify"])
def test_https_against_a_plain_http_port_says_so_and_nothing_else(
    loop: str, verify_tls: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """It printed ten "Future exception was never retrieved ... WRONG_VERSION_NUMBER"
    tracebacks (uvloop, connects cancelled mid-handshake), then advised --insecure even
    when verification was off."""
    with ServerThread(answer_400) as server:
        began = time.monotonic()
        with pytest.raises(TargetUnreachableError) as error:
            http_load(
                f"https://{HOST}:{server.port}/",
                loop=loop,
                connections=100,
                duration=WINDOW_S,
                verify_tls=verify_tls,
            )
        gc.collect()  # an unretrieved future speaks when it is collected
    assert time.monotonic() - began < WINDOW_S / 2
    message = str(error.value)
    assert "WRONG_VERSION_NUMBER" in message
    assert "the port speaks plain HTTP, not TLS: use http://" in message
    assert "verify" not in message
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in logged if "never retrieved" in r.getMessage()]
    # (The test server's own thread logs its cancelled handlers as it stops.)
    assert [r.getMessage() for r in logged if r.threadName != "test-server"] == []
