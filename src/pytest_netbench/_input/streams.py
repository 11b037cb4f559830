"""The checks of a streaming load's options (``stream``, ``stream_events``, ``stream_end``),
before any socket exists."""

from __future__ import annotations

from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._proto.streaming import STREAM_MODES


def checked_stream(
    stream: object, events: object, end: object, *, pipeline: object, mix: object
) -> dict[str, Any]:
    """The LoadSpec fields of a load's stream options; a SpecError says what is wrong."""
    if stream is None or stream == "none":
        if events is not None or end is not None:
            raise SpecError(
                "stream_events and stream_end check a stream: pass stream='sse' (server-sent"
                " events) or stream='chunks' too (CLI: netbench sse URL)"
            )
        return {}
    if stream == "grpc":
        raise SpecError(
            "stream='grpc' reads a gRPC server-streaming call: grpc_load(url,"
            " '/package.Service/Method', message, stream='grpc') (CLI: netbench grpc URL"
            " --method M --stream grpc)"
        )
    if stream not in STREAM_MODES:
        raise SpecError(
            "stream must be 'sse' (server-sent events), 'chunks' (each chunk of the body) or"
            f" 'openai' (an OpenAI-compatible token stream), or None, got {stream!r}"
        )
    if mix:
        raise SpecError("stream= reads one kind of request: a mix of streams is not yet")
    if pipeline != 1:
        raise SpecError("stream= reads one response at a time on a connection: drop pipeline")
    if events is not None and (
        isinstance(events, bool) or not isinstance(events, int) or events < 0
    ):
        raise SpecError(f"stream_events must be a whole number >= 0, got {events!r}")
    if end is not None and (not isinstance(end, str) or not end):
        raise SpecError(f"stream_end must be the text of the last event's data, got {end!r}")
    if end is not None and stream == "chunks":
        raise SpecError("stream_end is an event's data: it takes stream='sse' or 'openai'")
    if stream == "openai" and end is None:
        end = "[DONE]"  # every OpenAI-compatible stream ends so
    return {"stream": stream, "stream_events": events, "stream_end": end}
