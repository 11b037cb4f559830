"""A latency figure of a load in which no response succeeded: :class:`NoLatency`, a nan
that says why wherever it is read.

A plain nan keeps a result numeric and JSON-serialisable but tells a reader nothing:
``assert r.p99_ms < 50`` fails as ``assert nan < 50``. A ``NoLatency`` is that same nan
(it compares, formats and serialises as nan: ``f"{x:.1f}"`` is ``nan``, JSON ``null``
through ``to_dict()``) whose ``repr`` and ``str`` carry the reason, so pytest's assertion
message reads ``assert nan (no request succeeded: 50 of 50 requests were status errors,
e.g. HTTP 404) < 50``. Arithmetic on it gives a plain nan, as on any float.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

# An error sample is a hint in a one-line reason, not a log.
_SAMPLE_CHARS = 60


class NoLatency(float):
    """nan, with the reason no latency was measured (``why``) in its repr."""

    __slots__ = ("why",)
    why: str

    def __new__(cls, why: str) -> NoLatency:
        self = super().__new__(cls, math.nan)
        self.why = why
        return self

    def __repr__(self) -> str:
        return f"nan ({self.why})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[type[NoLatency], tuple[str]]:
        return (type(self), (self.why,))


def no_success_reason(
    *,
    echo: bool,
    sent: int,
    ok: int,
    errors: Mapping[str, int],
    in_flight: int,
    samples: Mapping[str, str],
) -> str:
    """Why a load (or one kind of request of a mix) has no latency, in one clause:
    ``no request succeeded: 50 of 50 requests were status errors, e.g. HTTP 404``."""
    noun, unit = ("exchange", "exchanges") if echo else ("request", "requests")
    if ok:
        return f"no latency was recorded for its {ok:,} ok {unit}"
    head = f"no {noun} succeeded"
    if sent == 0:
        return f"{head}: nothing was sent"
    parts = [
        (count, f"{kind} error" + ("s" if count != 1 else ""))
        for kind, count in sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
        if count
    ]
    if in_flight:
        parts.append((in_flight, "still in flight at the end"))
    top = next((kind for kind, count in sorted(errors.items(), key=lambda kv: -kv[1]) if count), "")
    sample = " ".join(samples.get(top, "").split())
    if len(sample) > _SAMPLE_CHARS:
        sample = sample[: _SAMPLE_CHARS - 3] + "..."
    example = f", e.g. {sample}" if sample else ""
    if not parts:
        return f"{head}: none of {sent:,} {unit} was answered"
    if len(parts) == 1:
        count, what = parts[0]
        verb = "was" if count == 1 else "were"
        article = "a " if count == 1 and what.endswith("error") else ""
        return f"{head}: {count:,} of {sent:,} {unit} {verb} {article}{what}{example}"
    listed = [f"{count:,} {what}" for count, what in parts]
    listed[0] = f"{parts[0][0]:,} were {parts[0][1]}"
    joined = ", ".join(listed[:-1]) + " and " + listed[-1]
    return f"{head}: of {sent:,} {unit}, {joined}{example}"
