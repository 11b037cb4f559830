"""asyncio Protocol on uvloop: HTTP hello and TCP echo."""

import asyncio

import uvloop

import _netbench_app as app


class HelloProtocol(asyncio.Protocol):
    __slots__ = ("transport", "framer")

    def connection_made(self, transport):
        self.transport = transport
        self.framer = app.RequestFramer()

    def data_received(self, data):
        try:
            requests = self.framer.feed(data)
        except app.BadRequest:
            self.transport.write(app.BAD_REQUEST)
            self.transport.close()
            return
        for path, keep_alive, http10 in requests:
            self.transport.write(app.render(path, keep_alive, http10))
            if not keep_alive:
                self.transport.close()
                return


class EchoProtocol(asyncio.Protocol):
    __slots__ = ("transport",)

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


async def main():
    args = app.parse_args()
    loop = asyncio.get_running_loop()
    protocol = HelloProtocol if args.app == "hello" else EchoProtocol
    server = await loop.create_server(
        protocol, args.host, args.port, backlog=args.backlog, reuse_address=True
    )
    stop = asyncio.Event()
    app.on_stop(lambda: loop.call_soon_threadsafe(stop.set))
    app.announce(server.sockets[0].getsockname()[1])
    await stop.wait()
    server.close()


if __name__ == "__main__":
    uvloop.install()
    asyncio.run(main())
