"""The sans-IO HTTP/1.1 framing, driven by byte strings alone (no sockets, no loop)."""

from __future__ import annotations

import random

import httptools
import pytest

from pytest_netbench._proto.http import (
    HeadResponseFramer,
    ResponseFramer,
    framer_for,
    render_request,
)

FramerClass = type[ResponseFramer] | type[HeadResponseFramer]


class Link:
    """A fake connection's receiving end: what the framer reported, in order."""

    def __init__(self, framer_class: FramerClass = ResponseFramer) -> None:
        self.responses: list[tuple[int, bool]] = []
        self.errors: list[str] = []
        self.framer = framer_class(self._on_response, self.errors.append)

    def _on_response(self, status: int, keep_alive: bool) -> None:
        self.responses.append((status, keep_alive))

    def feed(self, *pieces: bytes) -> Link:
        for piece in pieces:
            self.framer.feed(piece)
        return self

    def eof(self) -> bool:
        return self.framer.feed_eof()


def framed(data: bytes, framer_class: FramerClass = ResponseFramer) -> Link:
    return Link(framer_class).feed(data)


HELLO = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5;name=value\r\nhello\r\n"
    b"6\r\n world\r\n"
    b"0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n"
)
EMPTY_CHUNKED = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
NO_BODY = (
    b"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n"
    b"HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n"
)
INTERIM = (
    b"HTTP/1.1 100 Continue\r\n\r\n"
    b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
    b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
)
HTTP10_KEEPALIVE = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi"


# -- complete responses ----------------------------------------------------------------------


def test_content_length_response_is_one_keep_alive_response() -> None:
    link = framed(HELLO)
    assert link.responses == [(200, True)]
    assert link.errors == []
    assert link.feed(HELLO).responses == [(200, True)] * 2  # it ended at the boundary


def test_chunked_body_with_extensions_and_trailers_ends_after_the_trailers() -> None:
    link = framed(CHUNKED)
    assert link.responses == [(200, True)]
    assert link.errors == []
    assert link.feed(HELLO).responses == [(200, True)] * 2  # it ended at the boundary


def test_chunked_response_is_not_complete_before_the_last_chunk() -> None:
    cut = CHUNKED.index(b"0\r\nX-Checksum")
    link = framed(CHUNKED[:cut])
    assert link.responses == []
    assert link.feed(CHUNKED[cut:]).responses == [(200, True)]


def test_close_delimited_body_completes_only_at_end_of_stream() -> None:
    link = framed(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello, until close")
    assert link.responses == []
    assert link.eof() is True
    assert link.responses == [(200, False)]
    assert link.errors == []


def test_end_of_stream_does_not_complete_a_response_with_a_length() -> None:
    truncated = framed(HELLO[:-2])
    assert truncated.eof() is False
    assert truncated.responses == []
    chunked = framed(CHUNKED[:-10])
    assert chunked.eof() is False
    assert chunked.responses == []


def test_end_of_stream_between_responses_completes_nothing() -> None:
    link = framed(HELLO)
    assert link.eof() is False
    assert link.responses == [(200, True)]


def test_end_of_stream_inside_the_next_head_completes_nothing() -> None:
    # The next response's head is cut short: its status must not be taken from the last one.
    link = framed(HELLO + b"HTTP/1.1 200 OK\r\nX-Partial: y")
    assert link.eof() is False
    assert link.responses == [(200, True)]


def test_204_and_304_have_no_body_whatever_their_headers_say() -> None:
    link = framed(NO_BODY + HELLO)
    assert link.responses == [(204, True), (304, True), (200, True)]
    assert link.errors == []


def test_interim_1xx_responses_are_skipped_and_the_final_one_reported() -> None:
    link = framed(INTERIM)
    assert link.responses == [(201, True)]
    assert link.errors == []


@pytest.mark.parametrize(
    ("response", "keep_alive"),
    [
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", False),
        (HTTP10_KEEPALIVE, True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", True),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi", False),
        (b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\nhi", False),
    ],
    ids=["1.0-default-close", "1.0-keep-alive", "1.1-default", "1.1-close", "1.1-Close"],
)
def test_keep_alive_follows_version_and_connection_header(
    response: bytes, keep_alive: bool
) -> None:
    assert framed(response).responses == [(200, keep_alive)]


def test_http10_close_delimited_response_ends_at_end_of_stream() -> None:
    link = framed(b"HTTP/1.0 200 OK\r\n\r\nbody")
    assert link.eof() is True
    assert link.responses == [(200, False)]


def test_pipelined_responses_in_one_buffer_are_each_reported_in_order() -> None:
    data = HELLO + CHUNKED + EMPTY_CHUNKED + NO_BODY + INTERIM + HTTP10_KEEPALIVE
    link = framed(data)
    assert link.responses == [
        (200, True),
        (200, True),
        (404, True),
        (204, True),
        (304, True),
        (201, True),
        (200, True),
    ]
    assert link.errors == []
    assert link.feed(HELLO).responses[7:] == [(200, True)]  # and it ended at a boundary


def test_transfer_coding_ending_in_chunked_is_chunked() -> None:
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
    assert framed(data).responses == [(200, True)]


def test_transfer_coding_without_chunked_is_delimited_by_the_close() -> None:
    link = framed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nabc")
    assert link.responses == []
    assert link.eof() is True
    assert link.responses == [(200, False)]


def test_connection_header_is_a_token_list() -> None:
    data = b"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"
    assert framed(data).responses == [(200, False)]


def test_content_length_with_transfer_encoding_is_refused() -> None:
    link = framed(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\nhi\r\n0\r\n\r\n"
    )
    assert link.responses == []
    assert len(link.errors) == 1


# -- split at every byte boundary ------------------------------------------------------------

SPLIT_CASES = {
    "content-length": (HELLO, [(200, True)]),
    "chunked-trailers": (CHUNKED, [(200, True)]),
    "empty-chunked-404": (EMPTY_CHUNKED, [(404, True)]),
    "no-body-204-304": (NO_BODY, [(204, True), (304, True)]),
    "interim-1xx": (INTERIM, [(201, True)]),
    "http10-keep-alive": (HTTP10_KEEPALIVE, [(200, True)]),
    "pipelined": (HELLO + CHUNKED + HELLO, [(200, True)] * 3),
}


@pytest.mark.parametrize("name", sorted(SPLIT_CASES))
def test_every_split_point_gives_the_same_responses(name: str) -> None:
    data, expected = SPLIT_CASES[name]
    for cut in range(len(data) + 1):
        link = Link().feed(data[:cut], data[cut:])
        assert link.responses == expected, f"split at byte {cut}"
        assert link.errors == [], f"split at byte {cut}"


@pytest.mark.parametrize("name", sorted(SPLIT_CASES))
def test_byte_at_a_time_gives_the_same_responses(name: str) -> None:
    data, expected = SPLIT_CASES[name]
    link = Link().feed(*(data[i : i + 1] for i in range(len(data))))
    assert link.responses == expected
    assert link.errors == []


def test_close_delimited_split_at_every_byte_completes_at_end_of_stream() -> None:
    data = b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\nclose-delimited body"
    for cut in range(len(data) + 1):
        link = Link().feed(data[:cut], data[cut:])
        assert link.responses == []
        assert link.eof() is True, f"split at byte {cut}"
        assert link.responses == [(200, False)]


# -- HEAD ------------------------------------------------------------------------------------


def test_framer_for_picks_the_head_framer_only_for_head() -> None:
    assert framer_for("HEAD") is HeadResponseFramer
    assert framer_for("head") is HeadResponseFramer
    assert framer_for("GET") is ResponseFramer
    assert framer_for("POST") is ResponseFramer


def test_head_response_ends_with_its_header_block_despite_content_length() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"
    link = framed(head + head, HeadResponseFramer)
    assert link.responses == [(200, True), (200, True)]
    assert link.errors == []
    assert link.feed(head).responses == [(200, True)] * 3  # nothing left over


def test_head_responses_follow_keep_alive_rules_and_skip_interim() -> None:
    data = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
        b"HTTP/1.0 200 OK\r\n\r\n"
        b"HTTP/1.0 404 Not Found\r\nconnection: Keep-Alive\r\n\r\n"
        b"HTTP/1.1 200\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\n\r\n"
        b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive, X-Foo\r\n\r\n"
    )
    link = framed(data, HeadResponseFramer)
    assert link.responses == [
        (200, False),
        (200, False),
        (404, True),
        (200, True),
        (200, False),
        (200, True),
    ]
    assert link.errors == []


def test_head_responses_split_at_every_byte_boundary() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 503 Busy\r\nX: y\r\n\r\n"
    for cut in range(len(data) + 1):
        link = Link(HeadResponseFramer).feed(data[:cut], data[cut:])
        assert link.responses == [(200, True), (503, True)], f"split at byte {cut}"
        assert link.errors == []


def test_head_framer_keeps_a_partial_head_for_the_next_read() -> None:
    link = framed(b"HTTP/1.1 200 OK\r\nContent-", HeadResponseFramer)
    assert link.responses == []
    assert link.feed(b"Length: 9\r\n\r\n").responses == [(200, True)]


def test_head_framer_end_of_stream_inside_a_head_completes_nothing() -> None:
    link = framed(b"HTTP/1.1 200 OK\r\nContent-", HeadResponseFramer)
    assert link.eof() is False
    assert link.responses == []


# -- malformed input: on_error with a short reason, never an exception ---------------------

MALFORMED = {
    "status-not-a-number": b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",
    "not-http": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "bad-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",
    "negative-length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "duplicate-length": b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    "bytes-after-response": HELLO + b"unsolicited",
    "upgrade-101": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
    b"Connection: Upgrade\r\n\r\n",
    "status-below-100": b"HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n",
    "bare-lf-lines": b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",
    "obs-fold": b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_response_reports_one_short_reason(name: str) -> None:
    link = framed(MALFORMED[name])
    assert len(link.errors) == 1
    reason = link.errors[0]
    assert 0 < len(reason) <= 200
    assert "\n" not in reason
    assert link.framer.failed
    # A 101 is not a successful response: the load cannot go on over that connection.
    assert all(status != 101 for status, _ in link.responses)


def test_malformed_framer_ignores_later_input() -> None:
    link = framed(MALFORMED["not-http"])
    link.feed(HELLO, HELLO)
    assert link.responses == []
    assert len(link.errors) == 1


def test_bytes_after_a_complete_response_are_a_protocol_error_after_it() -> None:
    link = framed(MALFORMED["bytes-after-response"])
    assert link.responses == [(200, True)]
    assert len(link.errors) == 1


def test_huge_header_block_fails_instead_of_growing_forever() -> None:
    link = Link().feed(b"HTTP/1.1 200 OK\r\nX-Big: ")
    for _ in range(100):
        link.feed(b"a" * 1024)
        if link.errors:
            break
    assert link.errors == ["malformed response: header block larger than 64 KiB"]
    assert link.responses == []


def test_many_small_pipelined_responses_in_one_big_read_are_not_a_huge_head() -> None:
    # 100 KiB of complete responses followed by the start of the next head, in one feed.
    data = HELLO * (100 * 1024 // len(HELLO)) + b"HTTP/1.1 200 OK\r\nX: "
    link = framed(data)
    link.feed(b"y\r\nContent-Length: 0\r\n\r\n")
    assert link.errors == []
    assert len(link.responses) == 100 * 1024 // len(HELLO) + 1


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 20x OK\r\n\r\n",
        b"HTTP/1.1 042 Odd\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"garbage\r\n\r\n",
        b"HTTP/1.1 200 OK\nContent-Length: 5\n\n",
    ],
)
def test_malformed_head_response_reports_a_reason(head: bytes) -> None:
    link = framed(head, HeadResponseFramer)
    assert link.responses == []
    assert len(link.errors) == 1
    assert link.errors[0].startswith("malformed response: ")
    assert len(link.errors[0]) <= 200


def test_huge_head_response_header_block_fails() -> None:
    link = framed(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (65 * 1024), HeadResponseFramer)
    assert link.errors == ["malformed response: header block larger than 64 KiB"]


def test_head_framer_upgrade_is_an_error_not_a_response() -> None:
    link = framed(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", HeadResponseFramer)
    assert link.responses == []
    assert len(link.errors) == 1


# -- render_request --------------------------------------------------------------------------


def test_render_minimal_get() -> None:
    assert render_request("GET", "/", "127.0.0.1:8080") == (
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: netbench\r\n\r\n"
    )


def test_render_body_adds_content_length_and_no_keepalive_adds_connection_close() -> None:
    data = render_request(
        "post", "/submit?x=1", "localhost", [("X-Trace", "abc")], b"payload", keepalive=False
    )
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /submit?x=1 HTTP/1.1"
    assert b"Host: localhost" in lines
    assert b"X-Trace: abc" in lines
    assert b"Content-Length: 7" in lines
    assert b"Connection: close" in lines
    assert body == b"payload"


def test_render_user_headers_replace_the_defaults_case_insensitively() -> None:
    data = render_request(
        "GET",
        "/",
        "127.0.0.1",
        [("host", "example.test"), ("USER-AGENT", "me"), ("connection", "keep-alive")],
        keepalive=False,
    )
    lines = data.split(b"\r\n")
    assert lines.count(b"host: example.test") == 1
    assert not any(line.startswith(b"Host:") for line in lines)
    assert not any(line.startswith(b"User-Agent:") for line in lines)
    assert b"Connection: close" not in lines


def test_render_keeps_a_given_content_length_or_transfer_encoding() -> None:
    given = render_request("PUT", "/", "h", [("Content-Length", "3")], b"abc")
    assert given.count(b"Content-Length") == 1
    chunked = render_request("PUT", "/", "h", [("Transfer-Encoding", "chunked")], b"0\r\n\r\n")
    assert b"Content-Length" not in chunked


def test_render_absolute_form_target_for_a_proxy() -> None:
    data = render_request("GET", "http://127.0.0.1:9/a", "127.0.0.1:9")
    assert data.startswith(b"GET http://127.0.0.1:9/a HTTP/1.1\r\n")


@pytest.mark.parametrize(
    ("method", "target", "headers", "fragment"),
    [
        ("GET", "/", [("X-Evil", "a\r\nInjected: 1")], "line break"),
        ("GET", "/", [("X-Evil\n", "a")], "line break"),
        ("GET", "/", [("Bad:Name", "a")], "colon"),
        ("GE T", "/", [], "method"),
        ("", "/", [], "method"),
        ("GET", "/a b", [], "target"),
        ("GET", "", [], "target"),
    ],
)
def test_render_rejects_bad_input_with_a_clear_message(
    method: str, target: str, headers: list[tuple[str, str]], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        render_request(method, target, "127.0.0.1", headers)


def test_rendered_request_round_trips_through_a_response_framer_shape() -> None:
    # The rendered bytes are plain latin-1 HTTP: the head ends exactly once, before the body.
    data = render_request("POST", "/", "h", body=b"x\r\n\r\ny")
    head, sep, body = data.partition(b"\r\n\r\n")
    assert sep
    assert body == b"x\r\n\r\ny"
    assert b"Content-Length: 6" in head.split(b"\r\n")


# -- seeded fuzzing: random splits of long streams, mutated bytes never raise ---------------

STREAM_PARTS = [
    (HELLO, [(200, True)]),
    (CHUNKED, [(200, True)]),
    (EMPTY_CHUNKED, [(404, True)]),
    (NO_BODY, [(204, True), (304, True)]),
    (INTERIM, [(201, True)]),
    (HTTP10_KEEPALIVE, [(200, True)]),
]


@pytest.mark.parametrize("seed", range(5))
def test_random_pipelines_cut_at_random_points(seed: int) -> None:
    rng = random.Random(seed)
    picks = [rng.choice(STREAM_PARTS) for _ in range(200)]
    data = b"".join(part for part, _ in picks)
    expected = [response for _, responses in picks for response in responses]
    cuts = sorted(rng.sample(range(1, len(data)), 300))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    link = Link().feed(*pieces)
    assert link.responses == expected
    assert link.errors == []


def mutations(rng: random.Random, count: int) -> list[bytes]:
    sources = [part for part, _ in STREAM_PARTS] + list(MALFORMED.values())
    out = []
    for _ in range(count):
        data = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(data))
            action = rng.randrange(3)
            if action == 0:
                data[where] = rng.randrange(256)
            elif action == 1:
                del data[where]
            else:
                data.insert(where, rng.choice(b"\r\n :0123456789abcdefHTP/;"))
        out.append(bytes(data))
    out.append(bytes(rng.randrange(256) for _ in range(4096)))
    return out


@pytest.mark.parametrize("framer_class", [ResponseFramer, HeadResponseFramer])
def test_mutated_responses_never_raise_and_report_at_most_one_error(
    framer_class: FramerClass,
) -> None:
    rng = random.Random(1234)
    for data in mutations(rng, 1500):
        cut = rng.randrange(len(data) + 1)
        link = Link(framer_class).feed(data[:cut], data[cut:])
        link.eof()
        assert len(link.errors) <= 1, data
        assert all(isinstance(e, str) and len(e) <= 200 for e in link.errors)
        assert all(status >= 100 and status != 101 for status, _ in link.responses), data


# -- taking over a stream, and faults of our own -----------------------------------------------


def test_take_over_replays_delivered_responses_silently_and_finishes_the_open_one() -> None:
    link = Link()
    link.framer.take_over(HELLO + HELLO[:30])  # one whole response, then half of the next
    assert link.responses == []
    link.feed(HELLO[30:])
    assert link.responses == [(200, True)]
    assert link.errors == []


def test_take_over_keeps_the_head_size_bound() -> None:
    link = Link()
    link.framer.take_over(b"HTTP/1.1 200 OK\r\n")
    for _ in range(70):
        link.feed(b"X-Filler: " + b"f" * 1014 + b"\r\n")
    assert link.errors == ["malformed response: header block larger than 64 KiB"]


def test_an_exception_from_a_callback_is_raised_not_blamed_on_the_server() -> None:
    def broken(status: int, keep_alive: bool) -> None:
        raise RuntimeError("bug in the engine")

    errors: list[str] = []
    framer = ResponseFramer(broken, errors.append)
    with pytest.raises(RuntimeError, match="bug in the engine"):
        framer.feed(HELLO)
    assert errors == []


@pytest.mark.parametrize(
    ("response", "keep_alive"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi", False),
    ],
)
def test_httptools_forgets_keep_alive_once_the_message_completes(
    response: bytes, keep_alive: bool
) -> None:
    """Why the fused path's on_message_complete reads keep-alive itself, as a Python
    callback (``FusedHttpConnection._attach_framer``): after feed_data the parser keeps the
    status code of the message it completed, not whether it keeps the connection open. If
    this fails, keep-alive has become readable after the read, and the steady state could
    run in data_received with no Python callback per response (issue 35)."""

    class Callbacks:
        def on_message_complete(self) -> None:
            during.append((parser.get_status_code(), parser.should_keep_alive()))

    during: list[tuple[int, bool]] = []
    parser = httptools.HttpResponseParser(Callbacks())
    parser.feed_data(response)
    assert during == [(200, keep_alive)]
    assert (parser.get_status_code(), parser.should_keep_alive()) == (200, False)
