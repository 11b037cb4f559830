"""The checks of a streaming load's options (``stream``, ``stream_events``, ``stream_end``,
``goodput``), before any socket exists."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pytest_netbench._errors import SpecError


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
    from pytest_netbench._proto.streaming import STREAM_MODES  # a streaming load's only

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


# The SLO metrics of goodput, as vLLM's ``vllm bench serve --goodput`` names them (ms).
GOODPUT_METRICS = ("ttft", "tpot", "e2el")
_GOODPUT_SPLIT = re.compile(r"[\s,]+")


def checked_goodput(goodput: object, stream: object) -> tuple[tuple[str, float], ...]:
    """``goodput`` (vLLM's ``"ttft:200 tpot:50"``, commas allowed, or a mapping such as
    ``{"ttft": 200, "tpot": 50}``; milliseconds) as ``(metric, ms)`` pairs in the given
    order; ``()`` for none. A SpecError says what is wrong."""
    if goodput is None or goodput == "" or goodput == {}:
        return ()
    how = (
        "goodput is an SLO in ms per metric, as vLLM's --goodput: 'ttft:200 tpot:50'"
        " (metrics: ttft, tpot, e2el)"
    )
    if isinstance(goodput, str):
        pairs: list[tuple[object, object]] = []
        for item in _GOODPUT_SPLIT.split(goodput.strip()):
            name, colon, value = item.partition(":")
            if not colon:
                raise SpecError(f"{how}, got {goodput!r}")
            pairs.append((name.strip().lower(), value.strip()))
    elif isinstance(goodput, Mapping):
        pairs = list(goodput.items())
    else:
        raise SpecError(f"{how}, got {goodput!r}")
    slo: dict[str, float] = {}
    for name, value in pairs:
        if name not in GOODPUT_METRICS:
            raise SpecError(f"{how}: no metric {name!r}")
        if name in slo:
            raise SpecError(f"{how}: {name} given twice")
        try:
            ms = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise SpecError(f"{how}: {name}'s SLO {value!r} is no number of ms") from None
        if not math.isfinite(ms) or ms < 0:
            raise SpecError(f"{how}: {name}'s SLO must be ms >= 0, got {value!r}")
        slo[name] = ms
    if stream is None or stream == "none":
        raise SpecError(
            "goodput counts the streams that meet an SLO: it takes a streaming load,"
            " stream='openai' for an LLM's token stream (CLI: netbench sse URL --stream openai)"
        )
    if "tpot" in slo and stream != "openai":
        raise SpecError(
            f"tpot is a token stream's time per output token: goodput with tpot takes"
            f" stream='openai', got stream={stream!r} (ttft and e2el serve any stream)"
        )
    return tuple(slo.items())
