"""A small HTTP/2 server (h2c, prior knowledge) for the engine tests, on the ``h2``
library rather than netbench's own HTTP/2 code, so a mistake there cannot hide by being
made on both sides. Served by ``servers.ServerThread`` on 127.0.0.1, port 0.

Every stream is answered ``200`` with a short body once its request has ended, or
``status`` every ``status_every``-th stream (counted across connections, never random).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from servers import Seen

BODY = b"hello, h2"


@dataclass
class H2Options:
    status: int = 503
    status_every: int = 0  # every Nth stream is answered with `status`


class H2App:
    """An h2c server that answers every stream whole as soon as its request ends."""

    def __init__(self, options: H2Options | None = None) -> None:
        self.options = options or H2Options()
        self.seen = Seen()

    def _status(self) -> int:
        every = self.options.status_every
        return self.options.status if every and self.seen.requests % every == 0 else 200

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.seen.connections += 1
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        conn = h2.connection.H2Connection(config=config)
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        try:
            while data := await reader.read(65536):
                try:
                    events = conn.receive_data(data)
                except h2.exceptions.ProtocolError:
                    writer.write(conn.data_to_send())
                    return
                for event in events:
                    if isinstance(event, h2.events.DataReceived):
                        conn.acknowledge_received_data(
                            event.flow_controlled_length, event.stream_id
                        )
                    elif isinstance(event, h2.events.StreamEnded):
                        self.seen.requests += 1
                        headers = [(":status", str(self._status())), ("content-length", "9")]
                        conn.send_headers(event.stream_id, headers)
                        conn.send_data(event.stream_id, BODY, end_stream=True)
                writer.write(conn.data_to_send())
                await writer.drain()
        except ConnectionError:
            return
        finally:
            writer.close()
