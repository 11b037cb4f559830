"""aiohttp: web.Application hello, and a WebSocket echo (aiohttp does no raw TCP, so no
TCP echo)."""

import asyncio

from aiohttp import WSMsgType, web

import _netbench_app as app


async def hello(request):
    status, body = app.route(request.path_qs)
    if not app.has_body(status):
        return web.Response(status=status)
    return web.Response(status=status, body=body, content_type="text/plain")


async def websocket_echo(request):
    """Every path: each message back as it came (text as text, binary as binary); the
    client's first subprotocol, if it offers any, is accepted."""
    offered = request.headers.get("Sec-WebSocket-Protocol", "")
    ws = web.WebSocketResponse(protocols=[p.strip() for p in offered.split(",") if p.strip()])
    await ws.prepare(request)
    async for message in ws:
        if message.type == WSMsgType.TEXT:
            await ws.send_str(message.data)
        elif message.type == WSMsgType.BINARY:
            await ws.send_bytes(message.data)
    return ws


async def main():
    args = app.parse_args(apps=("hello", "ws"))
    application = web.Application()
    application.router.add_get("/{tail:.*}", websocket_echo if args.app == "ws" else hello)
    runner = web.AppRunner(application, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port, backlog=args.backlog, reuse_address=True)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    app.on_stop(lambda: loop.call_soon_threadsafe(stop.set))
    app.announce(runner.addresses[0][1])
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
