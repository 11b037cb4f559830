"""Property-based fuzzing of the HTTP/1.1 framers (``_proto/http.py``) and the whole-response
reader (``_proto/http_message.py``): valid responses of every framing, fed whole, a byte at
a time, split at every byte and at random, are found with the same boundaries and statuses;
damaged bytes end in responses or one protocol error, never an exception or a count lost."""

from __future__ import annotations

import string
from dataclasses import dataclass
from itertools import pairwise

from fuzzing import cut, every_split, fuzz, mutated, pieces
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_netbench._proto.http import HeadResponseFramer, ResponseFramer, only_final_response
from pytest_netbench._proto.http_message import ResponseReader, WholeResponse

FramerClass = type[ResponseFramer] | type[HeadResponseFramer]


@dataclass(frozen=True)
class Sent:
    """One response as the server wrote it, and what a reader must make of it."""

    data: bytes
    status: int
    keep_alive: bool
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    close_delimited: bool  # ends only when the server closes


class Events:
    """What a framer reported, checked as it comes: nothing after an error, one error."""

    def __init__(self, framer_class: FramerClass = ResponseFramer) -> None:
        self.responses: list[tuple[int, bool]] = []
        self.errors: list[str] = []
        self.framer = framer_class(self._response, self._error)

    def _response(self, status: int, keep_alive: bool) -> None:
        assert not self.errors, "a response after the error"
        assert 200 <= status <= 999, status
        assert isinstance(keep_alive, bool)
        self.responses.append((status, keep_alive))

    def _error(self, reason: str) -> None:
        assert not self.errors, "a second error"
        assert reason.startswith(("malformed response", "server switched protocols")), reason
        self.errors.append(reason)

    def run(self, chunks: list[bytes], eof: bool = True) -> Events:
        for chunk in chunks:
            self.framer.feed(chunk)
        if eof:
            ended = self.framer.feed_eof()
            assert isinstance(ended, bool)
        assert self.framer.failed == bool(self.errors)
        return self

    @property
    def seen(self) -> tuple[list[tuple[int, bool]], bool]:
        return self.responses, bool(self.errors)


class Reader:
    """A :class:`ResponseReader` told ``method`` before each response, as a flow uses it."""

    def __init__(self) -> None:
        self.responses: list[WholeResponse] = []
        self.errors: list[str] = []
        self.reader = ResponseReader(self._response, self._error)

    def _response(self, response: WholeResponse) -> None:
        assert not self.errors, "a response after the error"
        assert 200 <= response.status <= 999
        self.responses.append(response)

    def _error(self, reason: str) -> None:
        assert not self.errors, "a second error"
        self.errors.append(reason)

    @property
    def statuses(self) -> list[tuple[int, bool]]:
        return [(r.status, r.keep_alive) for r in self.responses]


# -- valid responses --
_NAME = st.text(string.ascii_letters + string.digits + "-", min_size=1, max_size=10)
_VALUE = st.text(string.ascii_letters + string.digits + " !#$%&'*+-.^_`|~/=,;", max_size=24).map(
    str.strip
)
_EXTRA = st.lists(st.tuples(_NAME.map(lambda n: "X-" + n), _VALUE), max_size=4)


def _cased(draw: st.DrawFn, name: str) -> str:
    return draw(st.sampled_from([name, name.lower(), name.upper()]))


def _head(draw: st.DrawFn, version: str, status: int, fields: list[tuple[str, str]]) -> bytes:
    reason = draw(st.sampled_from(["OK", "Whatever", "Not Found", "X"]))
    lines = [f"{version} {status} {reason}"] + [f"{n}: {v}" for n, v in fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunked(draw: st.DrawFn, body: bytes) -> tuple[bytes, list[tuple[str, str]]]:
    cuts = sorted(draw(st.lists(st.integers(1, max(1, len(body))), max_size=4)))
    bounds = [0, *[c for c in cuts if c < len(body)], len(body)]
    out = b""
    for a, b in pairwise(bounds):
        if a == b:
            continue
        size = draw(st.sampled_from(["%x", "%X", "0%x"])) % (b - a)
        extension = draw(st.sampled_from(["", ";a=b", ";name"]))
        out += f"{size}{extension}\r\n".encode() + body[a:b] + b"\r\n"
    trailers = draw(_EXTRA)
    out += draw(st.sampled_from([b"0", b"000"])) + b"\r\n"
    out += b"".join(f"{n}: {v}\r\n".encode() for n, v in trailers) + b"\r\n"
    return out, trailers


@st.composite
def response(draw: st.DrawFn, last: bool) -> Sent:
    """One final response (after any 1xx), framed in any way a server may frame it; only the
    ``last`` of a connection may end it (close-delimited, ``Connection: close``, HTTP/1.0)."""
    version = "HTTP/1.0" if last and draw(st.booleans()) and draw(st.booleans()) else "HTTP/1.1"
    interims = b""
    if version == "HTTP/1.1":
        for code in draw(st.lists(st.sampled_from([100, 102, 103]), max_size=2)):
            interims += _head(draw, version, code, draw(_EXTRA))
    status = draw(st.sampled_from([200, 204, 304, 404, 503]) | st.integers(200, 599))
    body = draw(st.binary(max_size=200))
    fields: list[tuple[str, str]] = list(draw(_EXTRA))
    keep_alive = version == "HTTP/1.1"
    if version == "HTTP/1.0" and draw(st.booleans()):
        fields.append((_cased(draw, "Connection"), "keep-alive"))
        keep_alive = True
    elif version == "HTTP/1.1" and last and draw(st.booleans()):
        fields.append((_cased(draw, "Connection"), "close"))
        keep_alive = False
    framings = ["length", "chunked"] if version == "HTTP/1.1" else ["length"]
    if last and not keep_alive:
        framings.append("close")
    framing = draw(st.sampled_from(framings))
    trailers: list[tuple[str, str]] = []
    if status in (204, 304):  # no body, whatever the headers say
        if draw(st.booleans()):
            fields.append((_cased(draw, "Content-Length"), str(len(body))))
        body, payload, framing = b"", b"", "none"
    elif framing == "length":
        fields.append((_cased(draw, "Content-Length"), str(len(body))))
        payload = body
    elif framing == "chunked":
        fields.append((_cased(draw, "Transfer-Encoding"), "chunked"))
        payload, trailers = _chunked(draw, body)
    else:
        payload = body
    order = draw(st.permutations(fields))
    data = interims + _head(draw, version, status, order) + payload
    headers = tuple((n.encode(), v.encode()) for n, v in [*order, *trailers])
    close_delimited = framing == "close"
    return Sent(data, status, keep_alive and not close_delimited, headers, body, close_delimited)


@st.composite
def pipeline(draw: st.DrawFn, most: int = 4) -> list[Sent]:
    """The responses of one connection, in order (only the last may end it)."""
    count = draw(st.integers(1, most))
    return [draw(response(last=i == count - 1)) for i in range(count)]


def _joined(sent: list[Sent]) -> bytes:
    return b"".join(s.data for s in sent)


def _expected(sent: list[Sent]) -> list[tuple[int, bool]]:
    return [(s.status, s.keep_alive) for s in sent]


@fuzz(0.5)
@given(pipeline())
def test_valid_responses_are_found_the_same_however_they_are_split(sent: list[Sent]) -> None:
    data = _joined(sent)
    for chunks in every_split(data):
        events = Events().run(chunks)
        assert events.seen == (_expected(sent), False), chunks


@fuzz()
@given(st.data(), pipeline())
def test_a_framer_taking_over_at_a_boundary_delivers_only_what_follows(
    data: st.DataObject, sent: list[Sent]
) -> None:
    # The fused path follows a stream up to a read that ends inside a response, then hands
    # it to a framer that continues from the last boundary: each response once in all.
    starts = [0]
    for s in sent:
        starts.append(starts[-1] + len(s.data))
    stream = _joined(sent)
    boundary = data.draw(st.sampled_from(starts[:-1]))
    point = data.draw(st.integers(boundary, len(stream)))
    events = Events()
    events.framer.take_over(stream[boundary:point])
    events.run(data.draw(pieces(stream[point:])))
    owed = [
        (s.status, s.keep_alive)
        for s, end in zip(sent, starts[1:], strict=True)
        if end > point or s.close_delimited
    ]
    assert events.seen == (owed, False)


@fuzz()
@given(st.data(), pipeline())
def test_a_reader_keeps_every_response_whole(data: st.DataObject, sent: list[Sent]) -> None:
    reader = Reader()
    reader.reader.expect("GET")
    for chunk in data.draw(pieces(_joined(sent))):
        reader.reader.feed(chunk)
    reader.reader.feed_eof()
    assert reader.errors == []
    assert reader.statuses == _expected(sent)
    assert [(r.headers, r.body) for r in reader.responses] == [(s.headers, s.body) for s in sent]


@st.composite
def heads(draw: st.DrawFn, most: int = 4) -> tuple[bytes, list[tuple[int, bool]]]:
    """Answers to HEAD requests: heads alone, whatever Content-Length they name."""
    data, expected = b"", []
    for _ in range(draw(st.integers(1, most))):
        for code in draw(st.lists(st.sampled_from([100, 103]), max_size=1)):
            data += _head(draw, "HTTP/1.1", code, [])
        version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0"]))
        status = draw(st.integers(200, 599))
        fields = list(draw(_EXTRA))
        if draw(st.booleans()):
            fields.append((_cased(draw, "Content-Length"), str(draw(st.integers(0, 10**6)))))
        connection = draw(st.sampled_from(["", "close", "keep-alive", "Keep-Alive, Upgrade"]))
        if connection:
            fields.append((_cased(draw, "Connection"), connection))
        tokens = {t.strip() for t in connection.lower().split(",")}
        keep = "close" not in tokens and (version == "HTTP/1.1" or "keep-alive" in tokens)
        data += _head(draw, version, status, draw(st.permutations(fields)))
        expected.append((status, keep))
    return data, expected


@fuzz(0.5)
@given(heads())
def test_head_answers_end_with_their_heads_however_split(
    answers: tuple[bytes, list[tuple[int, bool]]],
) -> None:
    data, expected = answers
    for chunks in every_split(data):
        assert Events(HeadResponseFramer).run(chunks).seen == (expected, False)


# -- damaged responses --
@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """Valid responses damaged, or bytes that merely start like a response."""
    if draw(st.integers(0, 4)) == 0:
        return b"HTTP/1.1 " + draw(st.binary(max_size=120))
    return draw(mutated(_joined(draw(pipeline()))))


_CUTS = st.lists(st.integers(0, 2000), max_size=12)


@fuzz(2)
@given(damaged(), _CUTS)
@example(b"HTTP/1.1 000 X\r\nContent-Length: 0\r\n\r\n", [5])
@example(b"HTTP/1.1 101 Switching\r\nUpgrade: x\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", [30])
def test_damaged_responses_end_in_responses_or_one_error_however_split(
    damaged: bytes, points: list[int]
) -> None:
    chunks = cut(damaged, points)
    whole = Events().run([damaged])
    assert Events().run(chunks).seen == whole.seen
    # The flows' reader frames by the same rules: the same responses, the same failure.
    reader = Reader()
    reader.reader.expect("GET")
    for chunk in chunks:
        reader.reader.feed(chunk)
    reader.reader.feed_eof()
    assert (reader.statuses, bool(reader.errors)) == whole.seen
    # A read that is one whole final response may be answered without a framer.
    alone = only_final_response(damaged)
    if alone is not None:
        assert Events().run([damaged], eof=False).seen == ([alone], False)


@fuzz(2)
@given(st.data(), st.one_of(st.binary(max_size=200), heads().map(lambda h: h[0])))
def test_damaged_head_answers_end_in_responses_or_one_error_however_split(
    data: st.DataObject, source: bytes
) -> None:
    damaged = data.draw(mutated(source)) if source else source
    whole = Events(HeadResponseFramer).run([damaged])
    assert Events(HeadResponseFramer).run(data.draw(pieces(damaged))).seen == whole.seen


def test_a_head_with_a_bare_lf_is_refused_in_one_read_as_in_two() -> None:
    # Found by the fuzzer: whole, the head was read up to its CRLFCRLF and passed (a status
    # line "200 OK\n\nX"); in two reads the first was refused for its bare LFs.
    data = b"HTTP/1.1 200 OK\n\nX\r\n\r\n"
    assert Events(HeadResponseFramer).run([data]).seen == ([], True)
    assert Events(HeadResponseFramer).run([data[:17], data[17:]]).seen == ([], True)


def test_a_status_of_000_is_an_error_for_the_reader_as_for_the_framer() -> None:
    # Found by the fuzzer: the reader took status 0 for "a HEAD answer already delivered"
    # and dropped the response without a word, so a flow waited for its timeout.
    reader = Reader()
    reader.reader.expect("GET")
    reader.reader.feed(b"HTTP/1.1 000 X\r\nContent-Length: 0\r\n\r\n")
    assert reader.responses == [] and len(reader.errors) == 1


@fuzz()
@given(st.data(), st.lists(st.booleans(), min_size=1, max_size=4))
def test_a_flows_reader_answers_get_and_head_one_exchange_at_a_time(
    data: st.DataObject, heads_asked: list[bool]
) -> None:
    # A flow awaits each answer before the next request, telling the reader its method:
    # a HEAD answer ends with its head, whatever Content-Length it names.
    reader = Reader()
    expected = []
    for index, head in enumerate(heads_asked):
        last = index == len(heads_asked) - 1
        if head:
            answer, statuses = data.draw(heads(most=1))
            expected.append((statuses[0], b""))
        else:
            sent = data.draw(response(last=last))
            if sent.close_delimited or not sent.keep_alive:
                continue  # one that ends the connection only ends it
            answer = sent.data
            expected.append(((sent.status, sent.keep_alive), sent.body))
        reader.reader.expect("HEAD" if head else "GET")
        for chunk in data.draw(pieces(answer)):
            reader.reader.feed(chunk)
        assert reader.errors == []
    assert [((r.status, r.keep_alive), r.body) for r in reader.responses] == expected


def test_a_head_answer_with_no_length_keeps_the_flows_connection() -> None:
    # Found by the fuzzer: the reader took llhttp's keep-alive for a HEAD answer, and llhttp
    # takes a head with no Content-Length for a close-delimited body: the flow closed a
    # connection the server kept (the engine's HEAD framer read it right).
    reader = Reader()
    reader.reader.expect("HEAD")
    reader.reader.feed(b"HTTP/1.1 200 OK\r\n\r\n")
    assert reader.statuses == [(200, True)]
