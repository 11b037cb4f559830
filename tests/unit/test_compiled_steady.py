"""The compiled steady state (``_engine/asyncio_io/compiled_steady.c``), held to httptools
and to the Python path it stands in for.

Its scanner may take a read only if llhttp parses it as exactly the same whole 200
responses that keep the connection open, ending between two responses: then the Python
path would have run the plain steady state once for each, which is what the reader does
instead. Fuzzed reads (well-formed, damaged, of every framing) hold that; well-formed
steady reads are all taken, so the compiled path is not quietly unused. The reader's
answers are held to the run rules on real loads by ``tests/engine/test_rule_copies.py``;
here it meets plain collaborators (a deque, an array's append, a list's append for the
write) to pin when it hands a read on.
"""

from __future__ import annotations

import gc
import importlib.util
import platform
import shutil
import subprocess
import sys
import sysconfig
import weakref
from array import array
from collections import deque
from pathlib import Path
from time import monotonic_ns

import httptools
import pytest
from fuzzing import fuzz, mutated
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_netbench._engine.asyncio_io import fused_http
from pytest_netbench._stats.recorder import SLOTS_US

SOURCE = Path(fused_http.__file__).with_name("compiled_steady.c")
MODULE = "pytest_netbench._engine.asyncio_io.compiled_steady"
REQUEST = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
CHUNKED_HEAD = b"Transfer-Encoding: chunked\r\n\r\n"
CHUNKED_TAB = b"Transfer-Encoding: chunked\t\r\n\r\n"  # llhttp reads this body to the close
CHUNKED_SPACE = b"Transfer-Encoding: chunked \r\n\r\n"
STEADY = b"HTTP/1.1 200 OK\r\nDate: Sun, 29 Nov 2026 20:00:00 GMT\r\nContent-Length: 5\r\n\r\nhello"


def _c_compiler() -> str | None:
    """The compiler Python was built with, if it and Python's headers are here."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which(compiler) if headers.is_file() else None


COMPILER = _c_compiler()
BUILDS_HERE = sys.platform.startswith("linux") and platform.python_implementation() == "CPython"
BUILT = fused_http.SteadyReader is not None
needs_built = pytest.mark.skipif(not BUILT, reason="compiled_steady is not built here")

if BUILT:
    from pytest_netbench._engine.asyncio_io.compiled_steady import SteadyReader, count_steady


def test_it_is_built_wherever_it_can_be() -> None:
    """The build is optional (setup.py): with no compiler the package still installs. Where
    there is one, a failed build must not pass unseen, leaving the Python path alone."""
    if COMPILER is None or not BUILDS_HERE:
        pytest.skip("built by CPython on Linux, with a C compiler and Python's headers, only")
    assert BUILT, "compiled_steady did not build: run `pip install -v -e .` to see why"
    spec = importlib.util.find_spec(MODULE)
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).stat().st_mtime >= SOURCE.stat().st_mtime, (
        f"{spec.origin} is older than {SOURCE.name}: rebuild it (`pip install -e .`)"
    )


def test_the_source_compiles_without_a_warning() -> None:
    if COMPILER is None or not BUILDS_HERE:
        pytest.skip("built by CPython on Linux, with a C compiler and Python's headers, only")
    include = sysconfig.get_paths()["include"]
    command = [COMPILER, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{include}"]
    done = subprocess.run([*command, str(SOURCE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# -- the scanner, against llhttp -------------------------------------------------------


class Parsed:
    """What llhttp makes of a read from the state between two responses: each response
    it completed, as (status, keep-alive read as it completes), and whether it ended
    between two responses without an error."""

    def __init__(self, data: bytes) -> None:
        self.completed: list[tuple[int, bool]] = []
        self.begun = 0
        self.parser = httptools.HttpResponseParser(self)
        try:
            self.parser.feed_data(data)
            self.failed = False
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self.failed = True

    def on_message_begin(self) -> None:
        self.begun += 1

    def on_message_complete(self) -> None:
        self.completed.append((self.parser.get_status_code(), self.parser.should_keep_alive()))

    @property
    def whole_steady(self) -> int:
        """How many steady 200s the read is, if it is nothing else; 0 otherwise."""
        if self.failed or self.begun != len(self.completed):
            return 0
        if not self.completed or any(c != (200, True) for c in self.completed):
            return 0
        return len(self.completed)


TOKEN = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
VALUE_BYTES = st.builds(lambda s: s.encode(), PRINTABLE) | st.binary(max_size=12)
NAMES = [
    b"Content-Length",
    b"content-length",
    b"CONTENT-LENGTH",
    b"Content-Type",
    b"Date",
    b"Connection",
    b"connection",
    b"Transfer-Encoding",
    b"Upgrade",
    b"Proxy-Connection",
    b"Keep-Alive",
    b"X-Request-Id",
    b"Content-Length ",
    b"X Id",
    b"",
    b"Content-Lengt",
]
CONNECTIONS = [b"keep-alive", b"Keep-Alive", b"close", b"upgrade", b"keep-alive, close", b""]
STATUS_LINES = [
    b"HTTP/1.1 200 OK",
    b"HTTP/1.1 200 ",
    b"HTTP/1.1 200",
    b"HTTP/1.0 200 OK",
    b"HTTP/1.1 204 No Content",
    b"HTTP/1.1 404 Not Found",
    b"HTTP/1.1 100 Continue",
    b"HTTP/1.1 101 Switching Protocols",
    b"HTTP/1.1 200 \xc3\xa9t\xc3\xa9",
    b"HTTP/1.1 200 A\tB",
    b"HTTP/2 200 OK",
    b"http/1.1 200 OK",
    b"HTTP/1.1 2000 OK",
    b"HTTP/1.1 304 Not Modified",
]


@st.composite
def steady_response(draw: st.DrawFn) -> bytes:
    """A response the scanner is there for: 200, Content-Length or chunked, any other
    headers of token names and printable values, perhaps ``Connection: keep-alive``."""
    body = draw(st.binary(max_size=64))
    framing = draw(st.sampled_from(["length", "chunked"]))
    reason = draw(st.sampled_from([b"OK", b"", b"Fine by me", b"A\tB"]))
    headers = [
        (draw(TOKEN.filter(_not_special)).encode() or b"X", draw(PRINTABLE).strip().encode())
        for _ in range(draw(st.integers(0, 4)))
    ]
    if framing == "length":
        name = draw(st.sampled_from([b"Content-Length", b"content-length", b"CONTENT-length"]))
        framed = (name, str(len(body)).encode())
    else:
        name = draw(st.sampled_from([b"Transfer-Encoding", b"transfer-encoding"]))
        framed = (name, draw(st.sampled_from([b"chunked", b"Chunked"])))
        body = draw(chunks(body))
    headers.insert(draw(st.integers(0, len(headers))), framed)
    if draw(st.booleans()):
        headers.append((b"Connection", draw(st.sampled_from([b"keep-alive", b"Keep-Alive"]))))
    space = draw(st.sampled_from([b"", b" ", b"  ", b"\t"]))
    head = b"HTTP/1.1 200 " + reason + b"\r\n"
    head += b"".join(name + b":" + space + value + b"\r\n" for name, value in headers)
    return head + b"\r\n" + body


@st.composite
def chunks(draw: st.DrawFn, body: bytes, last: bytes = b"0\r\n\r\n") -> bytes:
    """``body`` chunked at random places, its sizes in either case of hex, then ``last``."""
    points = sorted(draw(st.lists(st.integers(1, max(1, len(body))), max_size=3)))
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    upper = draw(st.booleans())
    sized = [
        (f"{len(piece):X}" if upper else f"{len(piece):x}").encode() + b"\r\n" + piece + b"\r\n"
        for piece in pieces
        if piece
    ]
    return b"".join(sized) + last


def _not_special(name: str) -> bool:
    return name.lower() not in {
        "content-length",
        "connection",
        "transfer-encoding",
        "upgrade",
        "proxy-connection",
    }


@st.composite
def any_response(draw: st.DrawFn) -> bytes:
    """A response of any status, framing and header: valid or not."""
    body = draw(st.binary(max_size=40))
    lines = [draw(st.sampled_from(STATUS_LINES))]
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(NAMES))
        if name.lower() == b"connection":
            value = draw(st.sampled_from(CONNECTIONS))
        elif name.lower().startswith(b"content-length"):
            value = draw(
                st.sampled_from([str(len(body)).encode(), b"0", b"+5", b"1 2", b"007", b""])
                | st.builds(lambda n: str(n).encode(), st.integers(0, 10**20))
            )
        elif name == b"Transfer-Encoding":
            value = draw(st.sampled_from([b"chunked", b"gzip, chunked", b"identity"]))
            if value.endswith(b"chunked"):
                last = draw(
                    st.sampled_from(
                        [
                            b"0\r\n\r\n",
                            b"0\r\nX: y\r\n\r\n",
                            b"0;a=b\r\n\r\n",
                            b"00\r\n\r\n",
                            b"0 \r\n\r\n",
                        ]
                    )
                )
                body = draw(chunks(body, last)) if draw(st.booleans()) else body
        else:
            value = draw(VALUE_BYTES)
        lines.append(name + b":" + draw(st.sampled_from([b"", b" ", b"\t"])) + value)
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


@needs_built
@fuzz(2)
@given(st.lists(steady_response(), min_size=1, max_size=3))
@example([STEADY])
@example([STEADY.replace(b"Date", b"Connection: keep-alive\r\nDate")])
@example(
    [STEADY.replace(b"Content-Length: 5\r\n\r\nhello", CHUNKED_HEAD + b"5\r\nhello\r\n0\r\n\r\n")]
)
def test_steady_reads_are_taken_and_are_what_llhttp_reads(responses: list[bytes]) -> None:
    data = b"".join(responses)
    assert Parsed(data).whole_steady == len(responses)
    assert count_steady(data) == len(responses)


@needs_built
@fuzz(4)
@given(st.lists(any_response() | steady_response(), min_size=1, max_size=3), st.data())
@example([STEADY[:-1]], None)
@example([STEADY + b"!"], None)
@example([STEADY.replace(b"5\r\n", b"5\r\nContent-Length: 5\r\n")], None)
@example([STEADY.replace(b"200 OK", b"200 OK\n")], None)
@example([STEADY.replace(b"Date:", b" Date:")], None)
@example([STEADY.replace(b"Date:", b"Connection: close\r\nDate:")], None)
@example([STEADY.replace(b"Content-Length: 5", b"Transfer-Encoding: chunked")], None)
@example([STEADY.replace(b"Content-Length: 5", b"Content-Length: 5\t")], None)
@example([STEADY.replace(b"Content-Length: 5", b"Content-Length: 5 ")], None)
@example([STEADY.replace(b"Date:", b"Connection: keep-alive\t\r\nDate:")], None)
@example(
    [
        STEADY.replace(
            b"Content-Length: 5\r\n\r\nhello", CHUNKED_HEAD + b"5;x=y\r\nhello\r\n0\r\n\r\n"
        )
    ],
    None,
)
@example(
    [STEADY.replace(b"Content-Length: 5\r\n\r\nhello", CHUNKED_HEAD + b"5\r\nhello\r\n0\r\n\r\n")],
    None,
)
@example(
    [STEADY.replace(b"Content-Length: 5\r\n\r\nhello", CHUNKED_HEAD + b"fffffffffffffffff\r\n")],
    None,
)
def test_whatever_is_taken_llhttp_reads_as_the_same_steady_200s(
    responses: list[bytes], data: st.DataObject | None
) -> None:
    read = b"".join(responses)
    if data is not None and data.draw(st.booleans()):
        read = data.draw(mutated(read))
    taken = count_steady(read)
    if taken:
        assert Parsed(read).whole_steady == taken, read


# -- the reader ------------------------------------------------------------------------


class Reader:
    """A reader with plain collaborators, and what each of them was given."""

    def __init__(
        self, *, pending: tuple[int, ...] = (1,), measure: int = 0, slots: int = 8
    ) -> None:
        self.handed: list[bytes] = []
        self.written: list[bytes] = []
        self.pending: deque[int] = deque(pending)
        self.slots = [0] * slots  # a slot a microsecond; a latency past them is appended
        self.latencies: array[int] = array("Q")
        self.reader = SteadyReader(
            self.handed.append, self.pending, self.slots, self.latencies.append, REQUEST, measure
        )


@needs_built
def test_a_disarmed_reader_hands_every_read_on() -> None:
    r = Reader()
    r.reader(STEADY)
    assert r.handed == [STEADY] and not r.latencies and r.pending == deque([1])
    assert not r.reader.armed and r.reader.take_counts() == (0, 0)


@needs_built
@pytest.mark.parametrize("sent", ["just now", "long ago"])
def test_an_armed_reader_answers_a_steady_read_as_the_plain_steady_state_does(sent: str) -> None:
    """The latency is counted in its microsecond's slot (``Recorder.count_as_recorded``),
    or, past the slots, appended in nanoseconds as the Python path appends it."""
    start = monotonic_ns() if sent == "just now" else 1
    r = Reader(pending=(start,), slots=SLOTS_US)
    r.reader.arm(r.written.append)
    r.reader(STEADY)
    assert r.handed == [] and r.written == [REQUEST]
    (now,) = r.pending  # the request written, from the clock reading that answered
    latency = now - start
    if latency // 1000 < SLOTS_US:
        assert r.slots[latency // 1000] == sum(r.slots) == 1 and not r.latencies
    else:
        assert list(r.latencies) == [latency] and not any(r.slots)
    assert r.reader.responses == 1
    assert r.reader.take_counts() == (1, len(STEADY))
    assert r.reader.take_counts() == (0, 0)  # taken once


@needs_built
@pytest.mark.parametrize(
    "read",
    [
        STEADY[:-1],  # ends inside the body: the framer takes the stream
        STEADY + STEADY[:20],  # the second ends inside its head
        STEADY.replace(b"200 OK", b"404 Not Found"),
        STEADY.replace(b"Date:", b"Connection: close\r\nDate:"),
        bytearray(STEADY),  # not bytes: the Python path copes with anything
    ],
    ids=["partial", "one and a part", "404", "close", "bytearray"],
)
def test_an_armed_reader_hands_on_a_read_it_does_not_take_whole(read: bytes) -> None:
    r = Reader()
    r.reader.arm(r.written.append)
    r.reader(read)
    assert r.handed == [read] and not r.written and not r.latencies


@needs_built
def test_what_the_window_and_the_requests_say_hands_a_read_on() -> None:
    unmeasured = Reader(pending=(5,), measure=10)  # the request was sent before the window
    unanswered = Reader(pending=(1,))
    for r, read in [(unmeasured, STEADY), (unanswered, STEADY * 2)]:
        r.reader.arm(r.written.append)
        r.reader(read)
        assert r.handed == [read] and not r.written, r
    unmeasured.reader.measure = 5  # the window moved (FusedHttpConnection.window_moved)
    unmeasured.reader(STEADY)
    assert len(unmeasured.latencies) == 1 and unmeasured.handed == [STEADY]


@needs_built
def test_disarming_hands_every_read_on_again() -> None:
    r = Reader()
    r.reader.arm(r.written.append)
    r.reader.disarm()
    r.reader(STEADY)
    assert r.handed == [STEADY] and not r.reader.armed


@needs_built
def test_an_error_of_a_collaborator_reaches_the_loop() -> None:
    r = Reader()

    def write(data: bytes) -> None:
        raise ConnectionResetError("gone")

    r.reader.arm(write)
    with pytest.raises(ConnectionResetError, match="gone"):
        r.reader(STEADY)
    with pytest.raises(TypeError, match="one read"):
        r.reader(STEADY, STEADY)  # type: ignore[call-arg]


@needs_built
def test_a_reader_and_its_connection_are_freed_together() -> None:
    """They refer to each other (the fallback is the connection's bound method): the
    cyclic GC sees through the reader."""

    class Connection:
        def data_received(self, data: bytes) -> None:
            pass

    connection = Connection()
    pending, slots = deque([1]), [0]
    reader = SteadyReader(connection.data_received, pending, slots, [].append, REQUEST, 0)
    vars(connection)["data_received"] = reader
    gone = weakref.ref(connection)
    del connection, reader
    gc.collect()
    assert gone() is None


@needs_built
def test_misuse_is_refused_with_a_clear_error() -> None:
    r = Reader()
    with pytest.raises(TypeError, match="transport's write"):
        r.reader.arm(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="initialised once"):
        r.reader.__init__(r.handed.append, r.pending, r.slots, r.latencies.append, REQUEST, 0)  # type: ignore[misc]
    broken = Reader(pending=(monotonic_ns(),), slots=1_000_000)  # a second's worth
    broken.slots[:] = ["x"] * len(broken.slots)  # type: ignore[list-item]
    broken.reader.arm(broken.written.append)
    with pytest.raises(TypeError, match="latency slot"):
        broken.reader(STEADY)


class Rendered:
    """What the reader reads and moves of a run whose requests are rendered from feeders."""

    def __init__(self, spare: int) -> None:
        self.spare = spare
        self.ready = deque([b"GET /1 HTTP/1.1\r\n\r\n", b"GET /2 HTTP/1.1\r\n\r\n"])


@needs_built
def test_rendered_requests_are_claimed_and_written_in_turn() -> None:
    r, run = Reader(), Rendered(spare=1)
    reader = SteadyReader(
        r.handed.append, r.pending, r.slots, r.latencies.append, None, 0,
        run=run, next_ready=run.ready.popleft,
    )  # fmt: skip
    reader.arm(r.written.append)
    reader(STEADY)
    assert r.written == [b"GET /1 HTTP/1.1\r\n\r\n"] and run.spare == 0 and not r.handed
    reader(STEADY)  # none spare: the Python path renders the next batch
    assert r.handed == [STEADY] and len(r.written) == 1 and len(run.ready) == 1


@needs_built
@pytest.mark.parametrize(
    ("request_", "rendered"),
    [(None, False), (REQUEST, True), ("GET", False)],
    ids=["no request", "both", "text"],
)
def test_a_request_or_rendered_ones_is_asked_for(request_: object, rendered: bool) -> None:
    run = Rendered(spare=1)
    extra = {"run": run, "next_ready": run.ready.popleft} if rendered else {}
    with pytest.raises(TypeError, match="request's bytes, or None"):
        SteadyReader(print, deque(), [], print, request_, 0, **extra)  # type: ignore[arg-type]


@needs_built
def test_open_loop_frees_the_connection_for_the_timer() -> None:
    """Open loop (``FusedOpenConnection._steady_response``): the latency from the due time
    (or the send, if it left early) and from the send, the connection put back on the
    idle list, nothing written; a request waiting for a connection leaves it to Python."""
    sent = monotonic_ns()
    r, intended, uncorrected = (
        Reader(pending=(sent,), slots=SLOTS_US),
        deque([sent - 5000]),
        array("Q"),
    )
    idle: list[object] = []
    backlog: deque[int] = deque()
    connection = object()
    reader = SteadyReader(
        r.handed.append, r.pending, r.slots, r.latencies.append, None, 0,
        intended=intended, uncorrected=uncorrected.append, idle=idle,
        backlog=backlog, connection=connection,
    )  # fmt: skip
    reader.arm(r.written.append)
    reader(STEADY)
    now = reader.answered_at
    assert idle == [connection] and not r.written and not r.pending and not intended
    assert list(uncorrected) == [now - sent]
    latency = now - (sent - 5000)  # from the due time, 5 µs before the send
    if latency // 1000 < SLOTS_US:
        assert r.slots[latency // 1000] == sum(r.slots) == 1 and not r.latencies
    else:
        assert list(r.latencies) == [latency]
    r.pending.append(sent)
    intended.append(sent)
    backlog.append(sent)
    reader(STEADY)
    assert r.handed == [STEADY] and idle == [connection]
