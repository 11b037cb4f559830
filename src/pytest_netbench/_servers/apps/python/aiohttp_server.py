"""aiohttp: web.Application hello (aiohttp does no raw TCP, so no echo)."""

import asyncio

from aiohttp import web

import _netbench_app as app


async def hello(request):
    status, body = app.route(request.path_qs)
    if not app.has_body(status):
        return web.Response(status=status)
    return web.Response(status=status, body=body, content_type="text/plain")


async def main():
    args = app.parse_args(apps=("hello",))
    application = web.Application()
    application.router.add_get("/{tail:.*}", hello)
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
