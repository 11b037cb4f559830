"""eventlet: eventlet.wsgi hello and a green-thread-per-connection echo."""

import warnings

warnings.simplefilter("ignore")  # eventlet warns on import that it is deprecated
import eventlet  # noqa: E402
import eventlet.wsgi  # noqa: E402

import _netbench_app as app  # noqa: E402


def echo(sock):
    try:
        app.echo_until_closed(sock)
    finally:
        sock.close()


def serve_echo(listener):
    pool = eventlet.GreenPool(100000)
    while True:
        sock, _ = listener.accept()
        pool.spawn_n(echo, sock)


def main():
    args = app.parse_args()
    listener = eventlet.listen(
        (args.host, args.port), family=app.address_family(args.host), backlog=args.backlog
    )

    def stop():
        raise SystemExit(0)  # raised in the main greenlet, which ends the serve loop

    app.on_stop(stop)
    app.announce(listener.getsockname()[1])
    try:
        if args.app == "hello":
            eventlet.wsgi.server(listener, app.wsgi_hello, log_output=False, max_size=100000)
        else:
            serve_echo(listener)
    except (SystemExit, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
