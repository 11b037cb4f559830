"""What the property-based fuzzers (``test_fuzz_*.py``) share: hypothesis profiles and the
strategies that cut and damage byte strings.

In the suite each fuzzer runs 25 examples, derandomized (the same examples on every run,
so CI is reproducible) and with no example database; the whole set adds about 10 s on a
busy 2-core machine. ``NETBENCH_FUZZ_EXAMPLES=N`` gives every fuzzer N examples a run,
drawn at random and remembered in ``.hypothesis/`` (a failure found once is tried first
next time): that is the long run, ``scripts/fuzz.sh MINUTES``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from itertools import pairwise
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Examples per fuzzer in the suite: enough to pass every kind of input through once.
SUITE_EXAMPLES = 25
_LONG = os.environ.get("NETBENCH_FUZZ_EXAMPLES")
EXAMPLES = int(_LONG) if _LONG else SUITE_EXAMPLES

settings.register_profile(
    "netbench-suite",
    max_examples=SUITE_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    # A busy 2-core machine makes any generation look slow: never a failure here.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "netbench-long",
    max_examples=EXAMPLES,
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("netbench-long" if _LONG else "netbench-suite")

F = TypeVar("F", bound=Callable[..., Any])


def fuzz(weight: float = 1.0) -> Callable[[F], F]:
    """The profile's settings with ``weight`` times its examples (a fuzzer whose examples
    cost more, such as one feeding every split of its input, runs fewer)."""
    return settings(max_examples=max(1, round(EXAMPLES * weight)))


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """``data`` cut at ``points`` (any order, repeats and ends allowed: empty pieces too)."""
    bounds = [0, *sorted(min(max(p, 0), len(data)) for p in points), len(data)]
    return [data[a:b] for a, b in pairwise(bounds)]


@st.composite
def pieces(draw: st.DrawFn, data: bytes, most: int = 12) -> list[bytes]:
    """``data`` in pieces as reads deliver it: cut at up to ``most`` random places."""
    if not data:
        return [data]
    points = draw(st.lists(st.integers(0, len(data)), max_size=most))
    return cut(data, points)


def every_split(data: bytes) -> list[list[bytes]]:
    """``data`` fed whole, a byte at a time, and in two at every byte boundary."""
    ways = [[data], [data[i : i + 1] for i in range(len(data))]]
    ways += [[data[:i], data[i:]] for i in range(1, len(data))]
    return ways


_MUTATIONS = ("flip", "set", "insert", "delete", "truncate", "duplicate", "bare-lf")


@st.composite
def mutated(draw: st.DrawFn, data: bytes, most: int = 4) -> bytes:
    """``data`` damaged in up to ``most`` places: a bit flipped, a byte set, bytes
    inserted, a range deleted or repeated, a CRLF made a bare LF, or the end cut off."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, most))):
        kind = draw(st.sampled_from(_MUTATIONS))
        at = draw(st.integers(0, len(out)))
        if kind == "flip" and at < len(out):
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and at < len(out):
            out[at] = draw(st.sampled_from([0, 0x7F, 0x80, 0xFF, *b"\r\n :;0aF\t"]))
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del out[at : at + draw(st.integers(1, 8))]
        elif kind == "duplicate":
            out[at:at] = out[at : at + draw(st.integers(1, 16))]
        elif kind == "bare-lf":
            crlf = out.find(b"\r\n", at)
            if crlf >= 0:
                del out[crlf]
        else:
            del out[at:]
    return bytes(out)
