"""A stream's figures by the names its kind of stream gives them, for every report: the
events of server-sent events, chunks and gRPC messages (first event, gap, whole), the
pushes to a held WebSocket connection (first push, gap: the latency table has each push's
delivery), and the tokens of an OpenAI-compatible stream by vLLM's names (TTFT, ITL, TPOT,
E2EL)."""

from __future__ import annotations

from pytest_netbench._model import LatencySummary
from pytest_netbench._model.streams import StreamStats


def stream_rows(stream: StreamStats) -> list[tuple[str, LatencySummary]]:
    """(label, figure) in the order a report shows them; figures never measured left out."""
    if stream.mode == "ws":
        rows: tuple[tuple[str, LatencySummary], ...] = (
            ("first push", stream.first_event),
            ("gap", stream.gap),
        )
        return [(label, summary) for label, summary in rows if summary.count]
    openai = stream.mode == "openai"
    rows = (
        ("first byte", stream.first_byte),
        ("TTFT" if openai else "first event", stream.first_event),
        ("ITL" if openai else "gap", stream.gap),
        *((("TPOT", stream.tpot),) if openai else ()),
        ("E2EL" if openai else "whole", stream.whole),
    )
    return [(label, summary) for label, summary in rows if summary.count]


def stream_legend(stream: StreamStats, *, open_loop: bool) -> list[str]:
    """What the rows measure, from where (a line or two)."""
    if stream.mode == "ws":
        return [
            "first push: from when its connection began listening (or the window opened);",
            "gap: between pushes to one connection",
        ]
    origin = "its intended send" if open_loop else "the request's send"
    if stream.mode == "openai":
        return [
            f"TTFT, E2EL: from {origin}; ITL: between token chunks;",
            "TPOT: (E2EL - TTFT) / (tokens - 1) a stream; vLLM's benchmark definitions",
        ]
    return [f"first byte, first event, whole: from {origin}; gap: between events"]
