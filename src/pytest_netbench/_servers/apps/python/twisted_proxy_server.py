"""Twisted: an HTTP proxy (twisted.web.proxy) in front of a backend, as in seed 004.

usage: twisted_proxy_server.py --host HOST --port PORT --backend HOST:PORT

Reverse proxying (``GET /path``) and forward proxying (``GET http://host/path``, what wrk's
proxy script sends) both go to the one backend: the request's own host is not used, so
this proxy never reaches beyond the backend it was given. Like ReverseProxyResource, it
opens a new HTTP/1.0 connection to the backend per request (the TIME_WAIT sockets seed 004
watched pile up).
"""

import argparse

import _netbench_app as app


def proxy_factory(backend_host, backend_port):
    from twisted.web import http, proxy

    class Backend:
        host = backend_host
        port = backend_port

    class ToBackend(proxy.ReverseProxyRequest):
        factory = Backend  # where ReverseProxyRequest.process connects

        def process(self):
            if self.uri.startswith(b"http://") or self.uri.startswith(b"https://"):
                # Absolute form: keep the path and query; the backend is fixed.
                rest = self.uri.split(b"://", 1)[1]
                slash = rest.find(b"/")
                self.uri = rest[slash:] if slash >= 0 else b"/"
            proxy.ReverseProxyRequest.process(self)

    class Channel(http.HTTPChannel):
        requestFactory = ToBackend

    class Factory(http.HTTPFactory):
        noisy = False
        protocol = Channel

        def log(self, request):
            pass  # no access log line per request

    return Factory()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=("hello",), default="hello")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--backlog", type=int, default=4096)
    parser.add_argument("--backend", required=True, help="HOST:PORT of the backend")
    args = parser.parse_args()
    backend_host, _, backend_port = args.backend.rpartition(":")
    from twisted.internet import reactor  # the default reactor: epoll on Linux

    factory = proxy_factory(backend_host.strip("[]"), int(backend_port))
    port = reactor.listenTCP(args.port, factory, backlog=args.backlog, interface=args.host)
    app.on_stop(lambda: reactor.callFromThread(reactor.stop))
    reactor.callWhenRunning(app.announce, port.getHost().port)
    reactor.run(installSignalHandlers=False)


if __name__ == "__main__":
    main()
