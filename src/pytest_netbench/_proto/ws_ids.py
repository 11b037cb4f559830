"""Sans-IO answers matched by an id they carry (``answer="id"``): each message the client
sends is a JSON object with a unique id in a field (``id_field``), and an answer is the
answer to the outstanding message whose id it carries, in whatever order answers come,
so several messages may be outstanding on a connection (``pipeline``).

The message is a template rendered once (``ws_template``), so a send joins three byte
strings and masks them, and never formats JSON. Ids are whole
numbers counted per connection (answers come back on the connection that sent the
message). An answer that is not a JSON object, lacks the field, or carries an id no
outstanding message has fails verification; it then answers the oldest outstanding
message, as a differing echo fails the message it answers.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable

from pytest_netbench._proto.framing import OnError
from pytest_netbench._proto.tcp import OK, VERIFY_FAILED
from pytest_netbench._proto.websocket import (
    TEXT,
    MessageFrames,
    OnClose,
    OnReply,
    WsFramer,
    WsSetup,
    client_frame,
)
from pytest_netbench._proto.ws_template import IdTemplate

# An answer to the outstanding message at ``index`` (0: the oldest), with its code.
OnAnswer = Callable[[int, int], None]


class IdMatcher:
    """One connection's messages by id: the next frame to send, and which outstanding
    message an answer answers."""

    __slots__ = ("_next", "_template", "outstanding")

    def __init__(self, template: IdTemplate) -> None:
        self._template = template
        self._next = 1
        self.outstanding: deque[int] = deque()  # ids, oldest first

    def next_frame(self) -> bytes:
        """The next message, masked, with a fresh id (now outstanding)."""
        message_id = self._next
        self._next += 1
        self.outstanding.append(message_id)
        return client_frame(TEXT, self._template.payload(message_id))

    def match(self, message: bytes) -> int:
        """The index among the outstanding of the message ``message`` answers (taken off
        them), or -1 when it carries no outstanding id (the oldest is then taken off)."""
        outstanding = self.outstanding
        try:
            document = json.loads(message)
            message_id = document[self._template.field]
            index = outstanding.index(message_id)
        except (ValueError, TypeError, KeyError, RecursionError):  # nested past the parser
            if outstanding:
                outstanding.popleft()
            return -1
        if isinstance(message_id, bool):  # True == 1: not an id
            outstanding.popleft()
            return -1
        del outstanding[index]
        return index


class IdFramer(WsFramer):
    """Server frames in, each whole data message matched by its id (``on_answer(code,
    index)``: ``OK`` and the index of the message it answers, or ``VERIFY_FAILED`` and 0);
    control frames, fragments and closes as every WebSocket framer reads them."""

    __slots__ = ("_matcher", "_on_answer")

    def __init__(
        self,
        frames: MessageFrames,
        matcher: IdMatcher,
        on_answer: OnAnswer,
        on_error: OnError,
        on_reply: OnReply,
        on_close: OnClose,
    ) -> None:
        super().__init__(frames, None, _no_response, on_error, on_reply, on_close)
        self._matcher = matcher
        self._on_answer = on_answer

    def feed(self, data: bytes) -> None:
        if self.failed or self.closed:
            return
        self._buffer += data
        self._parse()

    def release(self) -> None:
        super().release()
        self._on_answer = _no_answer

    def close_from_client(self, on_closed: Callable[[], None]) -> bytes:
        self._on_answer = _no_answer
        return super().close_from_client(on_closed)

    def _message_done(self, message: bytes) -> None:
        index = self._matcher.match(message)
        if index < 0:
            self._on_answer(VERIFY_FAILED, 0)
        else:
            self._on_answer(OK, index)


def id_framer(
    setup: WsSetup, on_answer: OnAnswer, on_error: OnError, on_reply: OnReply, on_close: OnClose
) -> tuple[IdFramer, IdMatcher]:
    """One connection's framer of a load with ``setup.ids``, and the matcher its sends
    take their ids from."""
    assert setup.ids is not None
    matcher = IdMatcher(setup.ids)
    return IdFramer(setup.frames, matcher, on_answer, on_error, on_reply, on_close), matcher


def _no_response(code: int, keep_alive: bool) -> None:
    """An id framer reports answers through ``on_answer`` only."""


def _no_answer(code: int, index: int) -> None:
    """A released framer's ``on_answer``."""
