"""Responses read as they arrive (sans-IO): the stream framer fed byte strings, with a clock
that moves one step a read, split at every offset."""

from __future__ import annotations

from itertools import count

import pytest

from pytest_netbench._proto.streaming import StreamCheck, StreamFramer, StreamLedger, StreamTimes


def _chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
EVENTS = [b'id: %d\ndata: {"n": %d}\n\n' % (i, i) for i in range(1, 4)]
SSE = HEAD + _chunked(*EVENTS, b"data: [DONE]\n\n")


class Run:
    """A framer and what it delivered: (status, keep_alive, events, gaps, ...) per response."""

    def __init__(self, mode: str = "sse", check: StreamCheck | None = None) -> None:
        self.ticks = count(1000, 1000)
        self.ledger = StreamLedger(mode, check or StreamCheck(), lambda: next(self.ticks))  # type: ignore[arg-type]
        self.done: list[tuple[int, bool, int, list[int], int, int, bool, str]] = []
        self.errors: list[str] = []
        self.framer: StreamFramer = self.ledger.framer(self.on_response, self.errors.append)

    def on_response(self, status: int, keep_alive: bool) -> None:
        f = self.ledger.last
        assert f is self.framer
        self.done.append(
            (
                status,
                keep_alive,
                f.events,
                list(f.gaps),
                f.first_byte_ns,
                f.first_event_ns,
                f.end_seen,
                f.problem,
            )
        )

    def feed(self, *pieces: bytes) -> Run:
        for piece in pieces:
            self.framer.feed(piece)
        return self


def test_a_chunked_event_stream_read_whole() -> None:
    run = Run(check=StreamCheck(events=3, end_marker="[DONE]")).feed(SSE)
    [(status, keep_alive, events, gaps, first_byte, first_event, end, problem)] = run.done
    assert (status, keep_alive, events, end, problem) == (200, True, 3, True, "")
    assert first_byte == first_event == 1000 and gaps == [0, 0]  # one read: no gaps


def test_each_event_in_its_own_read_is_timed_at_that_read() -> None:
    body = _chunked(*EVENTS, b"data: [DONE]\n\n")
    cuts = [body.index(b"id: 2") - 5, body.index(b"id: 3") - 5, body.index(b"data: [DONE]") - 5]
    pieces = [
        HEAD,
        body[: cuts[0]],
        body[cuts[0] : cuts[1]],
        body[cuts[1] : cuts[2]],
        body[cuts[2] :],
    ]
    run = Run(check=StreamCheck(end_marker="[DONE]")).feed(*pieces)
    [(_, _, events, gaps, first_byte, first_event, end, _)] = run.done
    assert (events, end, first_byte, first_event, gaps) == (3, True, 1000, 2000, [1000, 1000])


@pytest.mark.parametrize("cut", range(1, len(SSE)))
def test_split_at_every_offset(cut: int) -> None:
    run = Run(check=StreamCheck(events=3, end_marker="[DONE]")).feed(SSE[:cut], SSE[cut:])
    [(status, _, events, gaps, first_byte, _, end, problem)] = run.done
    assert (status, events, end, problem, len(gaps), first_byte) == (200, 3, True, "", 2, 1000)
    assert run.errors == []


def test_two_streams_on_one_connection_each_counted_apart() -> None:
    run = Run().feed(SSE + SSE)  # no end marker asked for: [DONE] is an event
    assert [d[2] for d in run.done] == [4, 4]


def test_a_sized_body_and_a_close_delimited_one() -> None:
    body = b"".join(EVENTS)
    sized = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n"
        % len(body)
    )
    assert Run().feed(sized + body).done[0][2] == 3
    closed = Run().feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + body)
    assert closed.done == [] and closed.framer.in_stream()
    assert closed.framer.feed_eof() is True
    assert closed.done[0][:3] == (200, False, 3)


def test_raw_chunks_one_event_a_chunk_timed_at_the_read_that_completed_it() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    body = _chunked(b"one", b"two", b"three")  # 3\r\none\r\n 3\r\ntwo\r\n 5\r\nthree\r\n 0...
    run = Run("chunks").feed(head, body[:4], body[4:16], body[16:])
    [(_, _, events, gaps, first_byte, first_event, _, problem)] = run.done
    assert (events, problem, first_byte, first_event) == (3, "", 1000, 3000)
    assert gaps == [0, 1000]  # "one" and "two" were completed by the same read


def test_raw_chunks_of_a_sized_body_are_its_reads() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\n"
    run = Run("chunks").feed(head, b"one", b"two", b"thr", b"")
    assert run.done[0][2:4] == (3, [1000, 1000])


def test_a_json_answer_where_a_stream_was_asked() -> None:
    body = b'{"choices": []}'
    run = Run().feed(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        % (len(body), body)
    )
    problem = run.done[0][7]
    assert problem.startswith("not an event stream: Content-Type 'application/json'")
    assert "the body begins b'{\"choices\": []}'" in problem
    assert run.done[0][2] == 0


def test_an_error_answer_keeps_the_start_of_its_body() -> None:
    body = b'{"error": "rate limited"}'
    run = Run().feed(b"HTTP/1.1 429 Too Many\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    assert run.done[0][0] == 429 and run.framer.error_body == body


def test_malformed_event_and_missing_end_marker() -> None:
    run = Run(check=StreamCheck(end_marker="[DONE]")).feed(HEAD + _chunked(b"bogus\n\n", *EVENTS))
    assert run.done[0][2] == 3
    assert run.done[0][7].startswith("malformed event: a line with no field")
    check = StreamCheck(events=4, end_marker="[DONE]")
    assert check.problem(3, True) == "expected 4 events, got 3"
    assert "without its end marker '[DONE]'" in check.problem(3, False)


def test_a_stream_cut_short_is_still_in_progress() -> None:
    run = Run().feed(SSE[: SSE.index(b"id: 3")])
    assert run.done == [] and run.framer.in_stream()
    assert run.framer.events == 2 and run.framer.status == 200
    assert run.framer.feed_eof() is False  # chunked: the close does not end it


def _sse_body(*events: bytes) -> bytes:
    return HEAD + _chunked(*(b"data: " + e + b"\n\n" for e in events))


def test_openai_token_chunks_as_vllm_reads_them() -> None:
    run = Run("openai", StreamCheck(end_marker="[DONE]"))
    run.feed(
        HEAD,
        _chunked(b'data: {"choices": [{"delta": {"role": "assistant"}}]}\n\n')[:-5],
        _chunked(b'data: {"choices": [{"delta": {"content": "Hel"}}]}\n\n')[:-5],
        _chunked(b'data: {"choices": [{"text": "lo"}]}\n\n')[:-5],
        _chunked(b'data: {"choices": [], "usage": {"completion_tokens": 7}}\n\n')[:-5],
        _chunked(b"data: [DONE]\n\n"),
    )
    [(status, _, events, gaps, first_byte, first_event, end, problem)] = run.done
    # The role chunk (no text) and the usage chunk are no tokens; [DONE] ends it.
    assert (status, events, end, problem) == (200, 2, True, "")
    assert (first_byte, first_event, gaps) == (1000, 3000, [1000])
    assert run.framer.usage_tokens == 7 and run.framer.tokens() == 7
    assert run.framer.done_ns == 6000


def test_openai_chunks_that_are_not_json() -> None:
    run = Run("openai", StreamCheck(end_marker="[DONE]")).feed(_sse_body(b"not json", b"[DONE]"))
    assert run.done[0][7] == "malformed event: data is not JSON: 'not json'"
    run = Run("openai", StreamCheck(end_marker="[DONE]")).feed(_sse_body(b"[1, 2]", b"[DONE]"))
    assert run.done[0][7] == "malformed event: not a JSON object: '[1, 2]'"


# -- gRPC server streaming: each message of an HTTP/2 stream's DATA frames an event --


def _grpc_messages(*messages: bytes) -> bytes:
    return b"".join(b"\x00" + len(m).to_bytes(4, "big") + m for m in messages)


def _grpc_times(body: bytes, cuts: list[int]) -> StreamTimes:
    ledger = StreamLedger("grpc", StreamCheck(), lambda: 0)
    times = StreamTimes(ledger)
    times.begin(1)
    times.status = 200
    times.head_done()
    start = 0
    for tick, cut in enumerate([*cuts, len(body)], start=2):
        times.take_body(body[start:cut], tick * 1000)
        start = cut
    times.finish_problem()
    return times


def test_grpc_messages_are_events_however_the_frames_cut_them() -> None:
    body = _grpc_messages(b"one", b"", b"three" * 50)
    whole = _grpc_times(body, [])
    assert (whole.events, list(whole.gaps), whole.problem) == (3, [0, 0], "")
    for cut in range(1, len(body)):
        times = _grpc_times(body, [cut])
        assert (times.events, times.problem) == (3, ""), cut
        # An event is timed at the piece that completed it: the first message at the first
        # piece only when the cut fell after it (3 bytes + 5 of prefix, and the empty one).
        first = 2000 if cut >= 8 else 3000
        assert times.first_event_ns == first, cut
    one_byte_each = _grpc_times(body, list(range(1, len(body))))
    assert one_byte_each.events == 3 and one_byte_each.first_event_ns == 9 * 1000


def test_a_grpc_call_that_ends_inside_a_message_is_malformed() -> None:
    body = _grpc_messages(b"one", b"two")
    times = _grpc_times(body[:-1], [])
    assert times.events == 1
    assert times.problem == "malformed gRPC stream: the call ended inside a message (1 whole)"
    flagged = _grpc_times(b"\x07" + body[1:], [])
    assert flagged.problem == "malformed gRPC message: a prefix flag of 7, not 0 or 1"
