"""Starlette on uvicorn: the hello app, and streams with set timings (``/sse``, ``/chunks``,
``/json``, and OpenAI-compatible ``/v1/completions`` and ``/v1/chat/completions``), the
same as the Go catalog server's.

``/sse``: server-sent events; ``/chunks``: a plain chunked body; ``/json``: a plain JSON
answer (where a stream may have been asked for). Query: ``first_ms`` (the first event that
long after the request), ``every_ms`` (then one every that long), ``events`` (how many,
default 10), ``end`` (the data of a last event, e.g. ``[DONE]``), ``cut=K`` (the connection
dropped mid-stream after K events), ``hold=1`` (the stream never ends after its events),
``malformed=1`` (a line with no known field before the first event), ``status=N`` (answer
N with a JSON error), ``per_stream_ms=P`` (the first event P ms later for each stream open
at once, this one included). Each event is sent at its due time from the request's arrival (no
drift: the sleeps aim at absolute instants), as one body chunk of a StreamingResponse.
"""

import asyncio
import json
import socket

import _netbench_app as app
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route


_open_streams = 0  # the /sse and /chunks streams being served (per_stream_ms)


class _Cut(Exception):
    """Raised inside a stream's body: uvicorn drops the connection mid-body."""


def _number(request, name, default):
    value = request.query_params.get(name, "")
    return int(value) if value.lstrip("-").isdigit() else default


async def stream(request: Request) -> Response:
    loop = asyncio.get_running_loop()
    start = loop.time()
    status = _number(request, "status", 200)
    if status != 200:
        error = {"error": {"message": "status %d asked for" % status, "code": status}}
        return Response(json.dumps(error) + "\n", status, media_type="application/json")
    if request.url.path == "/json":
        body = json.dumps({"choices": [{"text": "not a stream"}]}) + "\n"
        return Response(body, media_type="application/json")
    first, every = _number(request, "first_ms", 0), _number(request, "every_ms", 0)
    events, cut = _number(request, "events", 10), _number(request, "cut", -1)
    sse = request.url.path == "/sse"
    end = request.query_params.get("end", "")
    hold = request.query_params.get("hold") == "1"
    malformed = request.query_params.get("malformed") == "1"
    per_stream = _number(request, "per_stream_ms", 0)

    async def body():
        global _open_streams
        _open_streams += 1
        try:
            async for piece in events_of(first + per_stream * _open_streams):
                yield piece
        finally:
            _open_streams -= 1

    async def events_of(first):
        if sse and malformed:
            yield b"bogus line\n\n"
        for i in range(events):
            if i == cut:
                raise _Cut("the stream is cut here, as asked")
            await asyncio.sleep(max(0.0, start + (first + i * every) / 1000 - loop.time()))
            if sse:
                yield b'id: %d\ndata: {"n": %d}\n\n' % (i + 1, i + 1)
            else:
                yield b"chunk %d\n" % (i + 1)
        if sse and end:
            yield b"data: " + end.encode() + b"\n\n"
        if hold:
            await asyncio.Event().wait()

    media = "text/event-stream" if sse else "text/plain"
    return StreamingResponse(body(), media_type=media, headers={"Cache-Control": "no-cache"})


async def openai(request: Request) -> Response:
    """An OpenAI-compatible completion (``/v1/completions``) or chat completion
    (``/v1/chat/completions``) with set timings, as Go's: the body's ``max_tokens`` (16)
    tokens, the first ``first_ms`` after the request, then one every ``every_ms``; with
    ``"stream": true`` server-sent events of JSON chunks (a chat stream opens with a role
    chunk), a usage chunk with ``stream_options.include_usage``, then ``data: [DONE]``."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        ask = json.loads(await request.body())
    except ValueError:
        error = {"error": {"message": "the body is not a JSON request"}}
        return Response(json.dumps(error) + "\n", 400, media_type="application/json")
    tokens = int(ask.get("max_tokens", 16))
    first, every = _number(request, "first_ms", 0), _number(request, "every_ms", 0)
    chat = request.url.path == "/v1/chat/completions"
    usage = bool((ask.get("stream_options") or {}).get("include_usage"))

    def choice(text):
        return {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}

    if not ask.get("stream"):
        await asyncio.sleep(max(0.0, start + (first + (tokens - 1) * every) / 1000 - loop.time()))
        text = "tok " * tokens
        answer = {"index": 0, "message": {"role": "assistant", "content": text}}
        whole = {"choices": [answer if chat else {"index": 0, "text": text}]}
        whole["usage"] = {"completion_tokens": tokens}
        return Response(json.dumps(whole) + "\n", media_type="application/json")

    def event(chunk):
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    async def body():
        if chat:
            yield event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        for i in range(tokens):
            await asyncio.sleep(max(0.0, start + (first + i * every) / 1000 - loop.time()))
            yield event({"choices": [choice("tok%d " % (i + 1))]})
        last = dict(choice(""), finish_reason="length")
        if chat:
            last["delta"] = {}
        yield event({"choices": [last]})
        if usage:
            yield event({"choices": [], "usage": {"completion_tokens": tokens}})
        yield b"data: [DONE]\n\n"

    return StreamingResponse(body(), media_type="text/event-stream")


async def hello(request: Request) -> Response:
    query = request.url.query
    status, body = app.route(request.url.path + ("?" + query if query else ""))
    if not app.has_body(status):
        return Response(status_code=status, media_type="text/plain")
    return Response(body, status, media_type="text/plain")


routes = [Route(path, stream) for path in ("/sse", "/chunks", "/json")]
routes += [Route(p, openai, methods=["POST"]) for p in ("/v1/completions", "/v1/chat/completions")]
routes.append(Route("/{path:path}", hello))
application = Starlette(routes=routes)


class _Server(uvicorn.Server):
    """The launcher's stop (SIGTERM) ends it through ``app.on_stop``, exit status 0."""

    def capture_signals(self):  # uvicorn's own would re-raise SIGTERM after shutdown
        import contextlib

        return contextlib.nullcontext()


def main(args):
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it Nagle holds each small event until the client's delayed ACK (up to 40 ms).
    listener = socket.socket(app.address_family(args.host), socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepts
    listener.bind((args.host, args.port))
    listener.listen(args.backlog)
    config = uvicorn.Config(
        application,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = _Server(config)

    def stop():
        server.should_exit = True

    app.on_stop(stop)
    app.announce(listener.getsockname()[1])
    asyncio.run(server.serve(sockets=[listener]))


if __name__ == "__main__":
    main(app.parse_args(apps=("hello",)))
