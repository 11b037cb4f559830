"""aiohttp: web.Application hello, and a WebSocket echo (aiohttp does no raw TCP, so no
TCP echo); on /push and /broadcast, WebSocket pushes (see _netbench_app.push_plan)."""

import asyncio

from aiohttp import WSMsgType, web

import _netbench_app as app


async def hello(request):
    status, body = app.route(request.path_qs)
    if not app.has_body(status):
        return web.Response(status=status)
    return web.Response(status=status, body=body, content_type="text/plain")


async def websocket_echo(request):
    """Every path but /push and /broadcast: each message back as it came (text as text,
    binary as binary); the client's first subprotocol, if it offers any, is accepted."""
    offered = request.headers.get("Sec-WebSocket-Protocol", "")
    ws = web.WebSocketResponse(protocols=[p.strip() for p in offered.split(",") if p.strip()])
    await ws.prepare(request)
    plan = app.push_plan(request.path, request.query_string)
    if plan is not None:
        await (pushes(ws, plan) if plan.each else broadcast(ws, plan))
        return ws
    async for message in ws:
        if message.type == WSMsgType.TEXT:
            await ws.send_str(message.data)
        elif message.type == WSMsgType.BINARY:
            await ws.send_bytes(message.data)
    return ws


async def _listen(ws):
    """Read what the client sends (aiohttp answers its pings) until it closes."""
    async for _ in ws:
        pass


async def pushes(ws, plan):
    """/push: this connection gets a stamped message every plan.every_s, and after
    plan.close_after of them (if set) a close with plan.close_code."""
    reader = asyncio.ensure_future(_listen(ws))
    seq = 0
    try:
        while not ws.closed and not reader.done():
            seq += 1
            await ws.send_str(app.stamped(seq))
            if plan.close_after and seq >= plan.close_after:
                await ws.close(code=plan.close_code, message=b"enough")
                break
            await asyncio.sleep(plan.every_s)
    except ConnectionError:
        pass
    finally:
        reader.cancel()


_audience = set()  # the connections on /broadcast
_broadcaster = []  # the task that pushes to all of them, started by the first


async def _broadcast_every(every_s):
    seq = 0
    while True:
        await asyncio.sleep(every_s)
        seq += 1
        message = app.stamped(seq)  # one stamp for all: the send time of the broadcast
        for ws in list(_audience):
            try:
                await ws.send_str(message)
            except ConnectionError:
                _audience.discard(ws)


async def broadcast(ws, plan):
    """/broadcast: one message every plan.every_s (the first connection's) to every
    connection on /broadcast."""
    if not _broadcaster:
        _broadcaster.append(asyncio.ensure_future(_broadcast_every(plan.every_s)))
    _audience.add(ws)
    try:
        await _listen(ws)
    finally:
        _audience.discard(ws)


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
