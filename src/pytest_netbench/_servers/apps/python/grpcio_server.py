"""grpcio (gRPC's C core) serving unary methods on raw bytes, no protobuf code needed.

``/netbench.Echo/Say`` answers each message with itself; ``/netbench.Echo/Fail`` aborts
with NOT_FOUND and the message "no such thing"; ``/netbench.Echo/Sleep`` answers after
the number of milliseconds its message spells (ASCII digits), so a call's deadline can be
exceeded on purpose. Any other method is UNIMPLEMENTED, as gRPC answers. Cleartext
HTTP/2 (gRPC's "insecure" port); eight handlers run at once.
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


def main():
    args = app.parse_args(apps=("grpc",))
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(function)
        for name, function in (("Say", say), ("Fail", fail), ("Sleep", sleep))
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("netbench.Echo", handlers),))
    host = "[%s]" % args.host if ":" in args.host else args.host
    port = server.add_insecure_port("%s:%d" % (host, args.port))
    server.start()
    app.on_stop(lambda: server.stop(grace=None))
    app.announce(port)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
