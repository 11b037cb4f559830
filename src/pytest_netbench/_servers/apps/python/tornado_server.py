"""Tornado: tornado.web hello, a TCPServer echo and a WebSocketHandler echo; on /push and
/broadcast, WebSocket pushes (see _netbench_app.push_plan)."""

import asyncio

import tornado.httpserver
import tornado.iostream
import tornado.tcpserver
import tornado.web
import tornado.websocket
from tornado.netutil import bind_sockets

import _netbench_app as app


class HelloHandler(tornado.web.RequestHandler):
    def get(self, path):
        status, body = app.route(self.request.uri)
        self.set_status(status, app.reason(status))
        self.set_header("Content-Type", "text/plain")
        if app.has_body(status):
            self.write(body)


_audience = set()  # the connections on /broadcast
_broadcaster = []  # the task that pushes to all of them, started by the first


class WebSocketEcho(tornado.websocket.WebSocketHandler):
    """Every path but /push and /broadcast: each message back as it came (text as text,
    binary as binary)."""

    pusher = None

    def check_origin(self, origin):
        return True  # a load generator sends whatever Origin its test asks for

    def select_subprotocol(self, subprotocols):
        return subprotocols[0] if subprotocols else None  # the client's first, if any

    def open(self, *args):
        self.plan = app.push_plan(self.request.path, self.request.query)
        if self.plan is None:
            return
        if self.plan.each:
            self.pusher = asyncio.ensure_future(self._push())
            return
        _audience.add(self)
        if not _broadcaster:
            _broadcaster.append(asyncio.ensure_future(_broadcast_every(self.plan.every_s)))

    def on_message(self, message):
        if self.plan is None:
            self.write_message(message, binary=isinstance(message, bytes))

    def on_close(self):
        _audience.discard(self)
        if self.pusher is not None:
            self.pusher.cancel()

    async def _push(self):
        """/push: a stamped message every plan.every_s, and after plan.close_after of
        them (if set) a close with plan.close_code."""
        plan = self.plan
        seq = 0
        try:
            while True:
                seq += 1
                await self.write_message(app.stamped(seq))
                if plan.close_after and seq >= plan.close_after:
                    self.close(plan.close_code, "enough")
                    return
                await asyncio.sleep(plan.every_s)
        except tornado.websocket.WebSocketClosedError:
            pass


async def _broadcast_every(every_s):
    seq = 0
    while True:
        await asyncio.sleep(every_s)
        seq += 1
        message = app.stamped(seq)  # one stamp for all: the send time of the broadcast
        for handler in list(_audience):
            try:
                handler.write_message(message)
            except tornado.websocket.WebSocketClosedError:
                _audience.discard(handler)


class EchoServer(tornado.tcpserver.TCPServer):
    async def handle_stream(self, stream, address):
        try:
            while True:
                data = await stream.read_bytes(65536, partial=True)
                await stream.write(data)
        except tornado.iostream.StreamClosedError:
            pass


async def main():
    args = app.parse_args(apps=("hello", "echo", "ws"))
    sockets = bind_sockets(args.port, address=args.host, backlog=args.backlog)
    if args.app == "hello":
        application = tornado.web.Application(
            [(r"(.*)", HelloHandler)], log_function=lambda handler: None
        )
        server = tornado.httpserver.HTTPServer(application)
    elif args.app == "ws":
        application = tornado.web.Application(
            [(r".*", WebSocketEcho)], log_function=lambda handler: None
        )
        server = tornado.httpserver.HTTPServer(application)
    else:
        server = EchoServer()
    server.add_sockets(sockets)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    app.on_stop(lambda: loop.call_soon_threadsafe(stop.set))
    app.announce(sockets[0].getsockname()[1])
    await stop.wait()
    server.stop()


if __name__ == "__main__":
    asyncio.run(main())
