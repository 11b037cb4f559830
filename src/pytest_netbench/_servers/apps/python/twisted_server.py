"""Twisted: twisted.web hello and twisted.internet TCP echo."""

import _netbench_app as app


def hello_factory():
    from twisted.web import resource, server

    class Hello(resource.Resource):
        isLeaf = True

        def render_GET(self, request):
            status, body = app.route(request.uri.decode("latin-1"))
            request.setResponseCode(status)
            request.setHeader(b"Content-Type", b"text/plain")
            if not app.has_body(status):
                return b""
            request.setHeader(b"Content-Length", b"%d" % len(body))
            return body

    class QuietSite(server.Site):
        noisy = False

        def log(self, request):
            pass  # no access log line per request

    return QuietSite(Hello())


def echo_factory():
    from twisted.internet import protocol

    class Echo(protocol.Protocol):
        def dataReceived(self, data):
            self.transport.write(data)

    class EchoFactory(protocol.Factory):
        noisy = False
        protocol = Echo

    return EchoFactory()


def main():
    args = app.parse_args()
    from twisted.internet import reactor  # the default reactor: epoll on Linux

    factory = hello_factory() if args.app == "hello" else echo_factory()
    port = reactor.listenTCP(args.port, factory, backlog=args.backlog, interface=args.host)
    app.on_stop(lambda: reactor.callFromThread(reactor.stop))
    reactor.callWhenRunning(app.announce, port.getHost().port)
    reactor.run(installSignalHandlers=False)


if __name__ == "__main__":
    main()
