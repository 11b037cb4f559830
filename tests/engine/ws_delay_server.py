"""The WebSocket echo server of ``ws_servers`` in a process of its own, answering each
upgrade in two parts (``WsOptions.head_delay_s`` and ``rest_delay_s``): away from the
test process's GIL, whose load would otherwise make it late by a few ms. It prints
``NETBENCH_LISTENING port=<n>`` once listening, then ``KEPT head=<ms> rest=<ms>`` for each
handshake: the delays it actually kept. Ends on SIGTERM.

usage: python ws_delay_server.py HEAD_S REST_S
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

from ws_servers import WsApp, WsOptions


async def main(head_s: float, rest_s: float) -> None:
    app = WsApp(WsOptions(head_delay_s=head_s, rest_delay_s=rest_s))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            await app(reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print(f"NETBENCH_LISTENING port={server.sockets[0].getsockname()[1]}", flush=True)
    printed = 0
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.005)
        seen = app.seen
        for head, rest in list(zip(seen.heads_ms, seen.rests_ms, strict=False))[printed:]:
            print(f"KEPT head={head:.3f} rest={rest:.3f}", flush=True)
            printed += 1
    server.close()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]), float(sys.argv[2])))
