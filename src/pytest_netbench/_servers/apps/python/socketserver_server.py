"""socketserver with a thread per connection: http.server hello and TCP echo."""

import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import _netbench_app as app


class HelloHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as HTTP/1.1 clients expect
    # Headers and body go out in separate writes; with Nagle on, the body would wait
    # for the client's delayed ACK (about 40 ms a request).
    disable_nagle_algorithm = True

    def do_GET(self):
        status, body = app.route(self.path)
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        if app.has_body(status):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if app.has_body(status):
            self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # no output per request


class EchoHandler(socketserver.BaseRequestHandler):
    def handle(self):
        app.echo_until_closed(self.request)


def make_server(args):
    if args.app == "hello":
        server_class, handler = ThreadingHTTPServer, HelloHandler
    else:
        server_class, handler = socketserver.ThreadingTCPServer, EchoHandler

    class Server(server_class):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = args.backlog
        address_family = app.address_family(args.host)

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)

    return Server((args.host, args.port), handler)


def main():
    args = app.parse_args()
    server = make_server(args)

    # shutdown() waits for serve_forever(), so it must not run on the serving thread.
    app.on_stop(lambda: threading.Thread(target=server.shutdown, daemon=True).start())
    app.announce(server.server_address[1])
    server.serve_forever(poll_interval=0.05)
    server.server_close()


if __name__ == "__main__":
    main()
