"""asyncio streams (StreamReader/StreamWriter): HTTP hello and TCP echo."""

import asyncio

import _netbench_app as app


async def serve_hello(reader, writer):
    framer = app.RequestFramer()
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            try:
                requests = framer.feed(data)
            except app.BadRequest:
                writer.write(app.BAD_REQUEST)
                break
            keep_alive = True
            for path, keep_alive, http10 in requests:
                writer.write(app.render(path, keep_alive, http10))
                if not keep_alive:
                    break
            await writer.drain()
            if not keep_alive:
                break
    except (ConnectionError, asyncio.CancelledError):
        pass  # the peer went away, or the server is stopping
    finally:
        writer.close()


async def serve_echo(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass  # the peer went away, or the server is stopping
    finally:
        writer.close()


async def main():
    args = app.parse_args()
    handler = serve_hello if args.app == "hello" else serve_echo
    server = await asyncio.start_server(
        handler, args.host, args.port, backlog=args.backlog, reuse_address=True
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    app.on_stop(lambda: loop.call_soon_threadsafe(stop.set))
    app.announce(server.sockets[0].getsockname()[1])
    await stop.wait()
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
