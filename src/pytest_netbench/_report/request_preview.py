"""The requests a load would send, as ``netbench http --show-requests N`` prints them: each
request's bytes as they go on the wire (line ends shown as new lines), under a line naming
its kind, for a person to read or to paste into ``curl``."""

from __future__ import annotations

from collections.abc import Sequence


def format_requests(shown: Sequence[tuple[str, bytes]], *, asked: int, workers: int = 1) -> str:
    """``shown``: :func:`~pytest_netbench._proto.source.preview`'s (name, bytes) pairs of
    the first ``asked`` requests of worker 1 of ``workers``."""
    whose = f" (worker 1 of {workers})" if workers > 1 else ""
    parts = []
    for number, (name, request) in enumerate(shown, 1):
        text = request.decode("utf-8", "backslashreplace").replace("\r\n", "\n")
        parts.append(f"# {number} of {len(shown)}{whose}: {name}\n{text.rstrip(chr(10))}\n")
    return "\n".join(parts)


def closing_line(count: int, *, asked: int) -> str:
    """What the preview was, and that nothing was sent."""
    shown = f"{count:,} request{'' if count == 1 else 's'} shown"
    if count < asked:
        shown += f" of {asked:,} asked (a feeder with on_end='stop' ran out)"
    return f"{shown}; nothing was sent (run without --show-requests to send the load)"
