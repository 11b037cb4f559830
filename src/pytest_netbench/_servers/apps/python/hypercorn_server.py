"""hypercorn (ASGI, its HTTP/2 from the h2 library) serving the hello app over HTTP/2.

``--app h2c``: HTTP/1.1 and HTTP/2 with prior knowledge on one cleartext port. ``--app h2``:
TLS with ALPN ``h2`` and ``http/1.1``, on a self-signed certificate for the host made at
start with the openssl command line, in a temporary folder removed at exit. Paths as every
hello app (``/``, ``/bytes/N``, ``/status/N``), and ``/trailers``: ``ok`` with a trailer
``x-done: yes``. A request body is read to its end before the answer.
"""

import asyncio
import socket
import subprocess
import tempfile
from pathlib import Path

import _netbench_app as app
from hypercorn.asyncio import serve
from hypercorn.config import Config


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    if scope["path"] == "/trailers":
        start = {"type": "http.response.start", "status": 200, "trailers": True}
        start["headers"] = [(b"content-type", b"text/plain")]
        await send(start)
        await send({"type": "http.response.body", "body": b"ok"})
        await send({"type": "http.response.trailers", "headers": [(b"x-done", b"yes")]})
        return
    query = scope["query_string"].decode("latin-1")
    status, body = app.route(scope["path"] + ("?" + query if query else ""))
    headers = [(b"content-type", b"text/plain")]
    if not app.has_body(status):
        body = b""
    else:
        headers.append((b"content-length", str(len(body)).encode("ascii")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def self_signed(host, folder):
    key, cert = Path(folder) / "key.pem", Path(folder) / "cert.pem"
    san = "IP:" + host if host.replace(".", "").isdigit() or ":" in host else "DNS:" + host
    command = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt"]
    command += ["ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out", str(cert)]
    command += ["-days", "1", "-subj", "/CN=netbench " + host, "-addext", "subjectAltName=" + san]
    subprocess.run(command, check=True, capture_output=True)
    return str(key), str(cert)


async def main(args, folder):
    listener = socket.socket(app.address_family(args.host), socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, args.port))
    listener.listen(args.backlog)
    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    config.accesslog = None
    config.alpn_protocols = ["h2", "http/1.1"]
    if args.app == "h2":
        config.keyfile, config.certfile = self_signed(args.host, folder)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    app.on_stop(lambda: loop.call_soon_threadsafe(stop.set))
    app.announce(listener.getsockname()[1])
    await serve(application, config, shutdown_trigger=stop.wait)


if __name__ == "__main__":
    arguments = app.parse_args(apps=("h2c", "h2"))
    with tempfile.TemporaryDirectory(prefix="netbench-h2-") as scratch:
        asyncio.run(main(arguments, scratch))
