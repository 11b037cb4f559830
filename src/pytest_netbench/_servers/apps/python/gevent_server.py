"""gevent: pywsgi WSGIServer hello and StreamServer echo."""

import signal
import socket

import gevent
from gevent.pywsgi import WSGIServer
from gevent.server import StreamServer

import _netbench_app as app


class NoDelayWSGIServer(WSGIServer):
    """pywsgi writes headers and body separately: without TCP_NODELAY the body waits
    for the client's delayed ACK (about 40 ms a request)."""

    def handle(self, sock, address):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().handle(sock, address)


def echo(sock, address):
    try:
        app.echo_until_closed(sock)
    finally:
        sock.close()


def main():
    args = app.parse_args()
    listener = (args.host, args.port)
    if args.app == "hello":
        server = NoDelayWSGIServer(listener, app.wsgi_hello, log=None, backlog=args.backlog)
    else:
        server = StreamServer(listener, echo, backlog=args.backlog)
    server.start()
    gevent.signal_handler(signal.SIGTERM, server.stop)
    gevent.signal_handler(signal.SIGINT, server.stop)
    app.announce(server.server_port)
    server.serve_forever()


if __name__ == "__main__":
    main()
