"""wsgiref.simple_server: HTTP hello only (one thread, HTTP/1.0, a connection per request)."""

import threading
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import _netbench_app as app


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass  # no output per request


def main():
    args = app.parse_args(apps=("hello",))

    class Server(WSGIServer):
        allow_reuse_address = True
        request_queue_size = args.backlog
        address_family = app.address_family(args.host)

    server = make_server(
        args.host, args.port, app.wsgi_hello, server_class=Server, handler_class=QuietHandler
    )

    # shutdown() waits for serve_forever(), so it must not run on the serving thread.
    app.on_stop(lambda: threading.Thread(target=server.shutdown, daemon=True).start())
    app.announce(server.server_address[1])
    server.serve_forever(poll_interval=0.05)
    server.server_close()


if __name__ == "__main__":
    main()
