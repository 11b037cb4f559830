"""eventlet: eventlet.wsgi hello and a green-thread-per-connection echo."""

import os
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
        # Raising SystemExit here ends eventlet's accept loop, but its server then waits in
        # the hub for every open connection, and on PyPy a signal that arrives while the hub
        # runs can leave that wait unable to switch ("got an already-finished continulet"):
        # the server died with a traceback instead of exiting. A hello or echo server has
        # nothing to finish, so it leaves at once, cleanly.
        os._exit(0)

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
