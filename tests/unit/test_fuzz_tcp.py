"""Property-based fuzzing of raw TCP framing (``_proto/tcp.py``): framings written as text
give a framer or a ValueError; echoes, fixed-size, delimited and length-prefixed answers,
fed whole or in any pieces (or received into a shared buffer), are each counted once and
verified byte for byte."""

from __future__ import annotations

import pytest
from fuzzing import cut, fuzz, mutated, pieces
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_netbench._proto.tcp import (
    OK,
    VERIFY_FAILED,
    DelimitedFramer,
    EchoFramer,
    chunked,
    parse_framing,
)


class Events:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.errors: list[str] = []

    def response(self, code: int, keep_alive: bool) -> None:
        assert not self.errors and code in (OK, VERIFY_FAILED) and keep_alive
        self.codes.append(code)

    def error(self, reason: str) -> None:
        assert not self.errors and reason
        self.errors.append(reason)


_FRAMING_TEXT = st.one_of(
    st.text(max_size=20),
    st.tuples(
        st.sampled_from(["echo", "fixed", "line", "length-prefixed", "lines", "FIXED", ""]),
        st.sampled_from(["", ":"]),
        st.one_of(
            st.integers(0, 10**6).map(str),
            st.text("0123456789abcdefABCDEF \u00b2\u0663-+", max_size=8),
        ),
    ).map("".join),
)


@fuzz(2)
@given(_FRAMING_TEXT)
@example("fixed:0")
@example("length-prefixed:0")
@example("fixed:\u00b2")
@example("line: ")
@example("fixed:" + "9" * 5000)
def test_a_framing_is_a_framer_or_a_value_error_saying_the_forms(text: str) -> None:
    try:
        options = parse_framing(text)
    except ValueError as exc:
        assert "framing" in str(exc)
        return
    if options is None:
        assert text == "echo"
        return
    DelimitedFramer(Events().response, Events().error, **options)  # type: ignore[arg-type]


@st.composite
def framed(draw: st.DrawFn) -> tuple[dict[str, object], list[bytes], bytes]:
    """A framing's options, the answers, and the bytes they make on the wire."""
    kind = draw(st.sampled_from(["fixed", "line", "length-prefixed"]))
    if kind == "fixed":
        size = draw(st.integers(1, 20))
        answers = draw(st.lists(st.binary(min_size=size, max_size=size), max_size=8))
        return {"size": size}, answers, b"".join(answers)
    if kind == "line":
        delimiter = draw(st.sampled_from([b"\n", b"\r\n", b"\x00", b"abab", b"END"]))
        bodies = draw(st.lists(st.binary(max_size=20) | st.sampled_from([b"ab", b"a\r", b"EN"])))
        answers = [b + delimiter for b in bodies if (b + delimiter).find(delimiter) == len(b)]
        return {"delimiter": delimiter}, answers, b"".join(answers)
    prefix = draw(st.integers(1, 4))
    bodies = draw(st.lists(st.binary(max_size=300), max_size=6))
    answers = [len(b).to_bytes(prefix, "big") + b for b in bodies if len(b) < 256**prefix]
    return {"prefix_bytes": prefix}, answers, b"".join(answers)


@fuzz()
@given(st.data(), framed())
def test_each_framed_answer_is_counted_once_however_split(
    data: st.DataObject, case: tuple[dict[str, object], list[bytes], bytes]
) -> None:
    options, answers, stream = case
    right = data.draw(st.sampled_from(answers)) if answers else None
    expected = [OK if right is None or a == right else VERIFY_FAILED for a in answers]
    for chunks in ([stream], data.draw(pieces(stream, most=20))):
        events = Events()
        framer = DelimitedFramer(events.response, events.error, expected=right, **options)  # type: ignore[arg-type]
        for chunk in chunks:
            framer.feed(chunk)
        assert framer.feed_eof() is False
        assert (events.codes, events.errors) == (expected, [])


@fuzz()
@given(st.data(), framed())
def test_damaged_framed_answers_are_counted_the_same_however_split(
    data: st.DataObject, case: tuple[dict[str, object], list[bytes], bytes]
) -> None:
    options, _, stream = case
    damaged = data.draw(mutated(stream)) if stream else stream
    runs = []
    for chunks in ([damaged], data.draw(pieces(damaged, most=20))):
        events = Events()
        framer = DelimitedFramer(events.response, events.error, **options)  # type: ignore[arg-type]
        for chunk in chunks:
            framer.feed(chunk)
        runs.append((events.codes, events.errors))
    assert runs[0] == runs[1]


@fuzz()
@given(st.binary(min_size=1, max_size=30), st.integers(1, 20))
def test_an_unframed_answer_past_the_limit_is_one_error(junk: bytes, limit: int) -> None:
    events = Events()
    framer = DelimitedFramer(
        events.response, events.error, delimiter=b"\xff\xfe", max_response=limit
    )
    for chunk in cut(junk.replace(b"\xff", b""), [limit]) * 3:
        framer.feed(chunk)
    total = 3 * len(junk.replace(b"\xff", b""))
    assert (len(events.errors), events.codes) == (int(total > limit), [])


@st.composite
def echoes(draw: st.DrawFn) -> tuple[bytes, bytes, list[int]]:
    """A payload, what came back (echoes, some changed), and each echo's code."""
    payload = draw(st.binary(min_size=1, max_size=40))
    stream, codes = b"", []
    for _ in range(draw(st.integers(0, 6))):
        echo = draw(st.just(payload) | st.binary(min_size=len(payload), max_size=len(payload)))
        stream += echo
        codes.append(OK if echo == payload else VERIFY_FAILED)
    tail = draw(st.binary(max_size=len(payload) - 1))  # an echo under way
    return payload, stream + tail, codes


@fuzz()
@given(st.data(), echoes(), st.sampled_from([None, 1, 3, 64]))
def test_each_echo_is_checked_once_however_it_arrives(
    data: st.DataObject, case: tuple[bytes, bytes, list[int]], scratch: int | None
) -> None:
    payload, stream, codes = case
    chunks = data.draw(pieces(stream, most=20))
    fed = Events()
    framer = EchoFramer(payload, fed.response, fed.error)
    for chunk in chunks:
        framer.feed(chunk)
    assert (fed.codes, fed.errors) == (codes, [])
    # A buffered protocol receives into the framer's (maybe shared) buffer, as it offers.
    received = Events()
    shared = bytearray(scratch) if scratch else None
    framer = EchoFramer(payload, received.response, received.error, shared)
    for chunk in chunks:
        while chunk:
            space = framer.free_space()
            assert len(space) > 0
            size = min(len(space), len(chunk))
            space[:size] = chunk[:size]
            framer.received(size)
            chunk = chunk[size:]
    assert received.codes == codes


@fuzz()
@given(st.binary(max_size=100), st.integers(-2, 120))
def test_a_payload_is_written_in_the_pieces_asked_for(payload: bytes, chunk: int) -> None:
    parts = chunked(payload, chunk)
    assert b"".join(parts) == payload
    if 0 < chunk < len(payload):
        assert all(len(p) <= chunk for p in parts) and len(parts) == -(-len(payload) // chunk)


def test_an_empty_echo_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        EchoFramer(b"", Events().response, Events().error)
