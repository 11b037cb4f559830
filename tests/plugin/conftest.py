"""Helpers for the plugin's end-to-end tests: a tiny real HTTP server the pytester runs load.

The server is written into each pytester directory as ``hello_app.py`` and started by the
tests inside that run (through ``netbench_server``), so every load crosses a real loopback
socket to a real subprocess.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HELLO_APP = r'''
"""hello_app.py [--delay-ms N] [--crash-after N] -- a keep-alive HTTP/1.1 hello server."""
import argparse
import asyncio
import os
import sys

RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"
)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--crash-after", type=int, default=0)
    args = parser.parse_args()
    served = 0

    async def handle(reader, writer):
        nonlocal served
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                served += 1
                if args.crash_after and served >= args.crash_after:
                    print(f"hello_app: crashing on purpose after {served} requests", flush=True)
                    os._exit(3)
                if args.delay_ms:
                    await asyncio.sleep(args.delay_ms / 1000.0)
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(handle, args.host, args.port, backlog=1024)
    port = srv.sockets[0].getsockname()[1]
    print(f"hello_app: serving on {args.host}", flush=True)
    print(f"NETBENCH_LISTENING port={port}", flush=True)
    async with srv:
        await srv.serve_forever()


asyncio.run(main())
'''

# Used inside the generated test files: the command netbench_server starts.
HELLO_COMMAND = f"[{sys.executable!r}, 'hello_app.py', '--host', '{{host}}', '--port', '{{port}}']"
PORT_PATTERN = r"NETBENCH_LISTENING port=(\d+)"


@pytest.fixture
def hello_app(pytester: pytest.Pytester) -> Path:
    """Write hello_app.py and a conftest with a `hello` factory into the pytester dir."""
    path = pytester.path / "hello_app.py"
    path.write_text(HELLO_APP)
    pytester.makeconftest(
        f"""
import pytest

HELLO = {HELLO_COMMAND}


@pytest.fixture
def hello(netbench_server):
    def start(*extra):
        return netbench_server(HELLO + list(extra), port_pattern={PORT_PATTERN!r})
    return start
"""
    )
    return path
