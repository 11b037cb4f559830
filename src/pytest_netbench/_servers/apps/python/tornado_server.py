"""Tornado: tornado.web hello, a TCPServer echo and a WebSocketHandler echo."""

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


class WebSocketEcho(tornado.websocket.WebSocketHandler):
    """Every path: each message back as it came (text as text, binary as binary)."""

    def check_origin(self, origin):
        return True  # a load generator sends whatever Origin its test asks for

    def select_subprotocol(self, subprotocols):
        return subprotocols[0] if subprotocols else None  # the client's first, if any

    def on_message(self, message):
        self.write_message(message, binary=isinstance(message, bytes))


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
