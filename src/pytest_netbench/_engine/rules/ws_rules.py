"""WebSocket round trips, the rules both loops follow (sans-IO): when a refused upgrade's
status and a server's close code count in ``status_codes``, and how an answer matched by
id to a later message is recorded. Their words are ``failures``'; the held connections of
a listen load have rules of their own (``listen_rules``).
"""

from __future__ import annotations

from collections import deque


def refusal_counts(pending: deque[int], measure_start_ns: int, stopping: bool) -> bool:
    """Does a refused upgrade's status count? Only for a message of the window (the one the
    connection was opened for), and not once the load has stopped."""
    return bool(pending) and pending[0] >= measure_start_ns and not stopping


def close_counts(now: int, measure_start_ns: int, stopping: bool) -> bool:
    """Does the server's close code count? Only inside the window, not after the stop."""
    return not stopping and now >= measure_start_ns


def count_code(codes: dict[int, int], code: int) -> None:
    codes[code] = codes.get(code, 0) + 1


def answer_to_front(index: int, *queues: deque[int]) -> None:
    """An answer matched by id came for the ``index``-th message outstanding: its times
    move to the front of each queue, where the run records the oldest."""
    if not index:
        return
    for times in queues:
        if index < len(times):
            when = times[index]
            del times[index]
            times.appendleft(when)
