"""trio: HTTP hello (hand-written framing on trio streams) and TCP echo."""

from functools import partial

import trio

import _netbench_app as app


async def serve_hello(stream):
    framer = app.RequestFramer()
    try:
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            try:
                requests = framer.feed(data)
            except app.BadRequest:
                await stream.send_all(app.BAD_REQUEST)
                return
            for path, keep_alive, http10 in requests:
                await stream.send_all(app.render(path, keep_alive, http10))
                if not keep_alive:
                    return
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        await stream.aclose()


async def serve_echo(stream):
    try:
        while True:
            data = await stream.receive_some(65536)
            if not data:
                return
            await stream.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        await stream.aclose()


async def main():
    args = app.parse_args()
    handler = serve_hello if args.app == "hello" else serve_echo
    listeners = await trio.open_tcp_listeners(args.port, host=args.host, backlog=args.backlog)
    token = trio.lowlevel.current_trio_token()
    async with trio.open_nursery() as nursery:
        app.on_stop(lambda: token.run_sync_soon(nursery.cancel_scope.cancel))
        nursery.start_soon(partial(trio.serve_listeners, handler, listeners))
        app.announce(listeners[0].socket.getsockname()[1])


if __name__ == "__main__":
    trio.run(main)
