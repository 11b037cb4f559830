"""grpcio (gRPC's C core) serving unary methods on raw bytes, no protobuf code needed.

``/netbench.Echo/Say`` answers each message with itself; ``/netbench.Echo/Fail`` aborts
with NOT_FOUND and the message "no such thing"; ``/netbench.Echo/Sleep`` answers after
the number of milliseconds its message spells (ASCII digits), so a call's deadline can be
exceeded on purpose. ``/netbench.Echo/Stream`` is server streaming: its message spells
``N,F,G`` (ASCII: ``20,50,10``) and it sends N messages (``message 1`` ...), the first F ms
after the call arrived and then one every G ms, each at its due time from the arrival;
``N,F,G,abort`` then ends the call with ABORTED instead of OK. Any other method is
UNIMPLEMENTED, as gRPC answers. Cleartext HTTP/2 (gRPC's "insecure" port); 64 handlers
run at once (a server-streaming call holds one for its whole stream).
"""

import time
from concurrent import futures

import _netbench_app as app
import grpc


def say(request, context):
    return request


def fail(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


def sleep(request, context):
    time.sleep(int(request or b"0") / 1000.0)
    return request


def stream(request, context):
    fields = request.decode("ascii").split(",")
    count, first_ms, every_ms = (int(field) for field in fields[:3])
    start = time.monotonic()
    for index in range(count):
        due = start + (first_ms + index * every_ms) / 1000.0
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if not context.is_active():
            return
        yield b"message %d" % (index + 1)
    if fields[3:] == ["abort"]:
        context.abort(grpc.StatusCode.ABORTED, "aborted after %d messages" % count)


def main():
    args = app.parse_args(apps=("grpc",))
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(function)
        for name, function in (("Say", say), ("Fail", fail), ("Sleep", sleep))
    }
    handlers["Stream"] = grpc.unary_stream_rpc_method_handler(stream)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("netbench.Echo", handlers),))
    host = "[%s]" % args.host if ":" in args.host else args.host
    port = server.add_insecure_port("%s:%d" % (host, args.port))
    server.start()
    app.on_stop(lambda: server.stop(grace=None))
    app.announce(port)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
