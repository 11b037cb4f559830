"""Answers matched by the id they carry (``answer="id"``), with byte strings only."""

from __future__ import annotations

import json

import pytest

from pytest_netbench._proto import websocket as ws
from pytest_netbench._proto.tcp import OK, VERIFY_FAILED
from pytest_netbench._proto.ws_ids import IdFramer, IdMatcher
from pytest_netbench._proto.ws_template import IdTemplate


def unmask(frame: bytes) -> bytes:
    assert frame[1] & 0x80 and frame[1] & 0x7F < 126
    return ws.mask(frame[6:], frame[2:6])


def server_text(document: object) -> bytes:
    payload = json.dumps(document).encode()
    return ws.frame_header(ws.TEXT, len(payload), masked=False) + payload


def test_the_template_puts_each_id_in_its_field() -> None:
    template = IdTemplate.from_message('{"op": "get", "ref": "x", "k": "é"}', "ref")
    assert json.loads(template.payload(17)) == {"op": "get", "ref": 17, "k": "é"}
    added = IdTemplate.from_message("{}", "id")  # the field is added where missing
    assert json.loads(added.payload(3)) == {"id": 3}


@pytest.mark.parametrize(
    ("message", "words"), [("[1]", "must be a JSON object"), ("{", "must be JSON")]
)
def test_a_template_needs_a_json_object(message: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        IdTemplate.from_message(message, "id")


def test_answers_in_any_order_find_their_message() -> None:
    matcher = IdMatcher(IdTemplate.from_message('{"a": 1}', "id"))
    sent = [json.loads(unmask(matcher.next_frame()))["id"] for _ in range(3)]
    assert sent == [1, 2, 3] and list(matcher.outstanding) == [1, 2, 3]
    assert matcher.match(b'{"id": 3}') == 2
    assert matcher.match(b'{"id": 1, "x": 0}') == 0
    assert list(matcher.outstanding) == [2]


@pytest.mark.parametrize(
    "answer", [b'{"id": 9}', b'{"other": 1}', b"not json", b"[2]", b'{"id": true}']
)
def test_an_answer_with_no_outstanding_id_fails_the_oldest(answer: bytes) -> None:
    matcher = IdMatcher(IdTemplate.from_message("{}", "id"))
    matcher.next_frame()
    matcher.next_frame()
    assert matcher.match(answer) == -1
    assert list(matcher.outstanding) == [2]


def test_the_framer_reports_each_answer_with_its_index() -> None:
    template = IdTemplate.from_message("{}", "id")
    matcher = IdMatcher(template)
    answers: list[tuple[int, int]] = []
    replies: list[bytes] = []
    framer = IdFramer(
        ws.MessageFrames(template.payload(0), text=True),
        matcher,
        lambda code, index: answers.append((code, index)),
        pytest.fail,
        replies.append,
        lambda code, reason: None,
    )
    for _ in range(3):
        matcher.next_frame()
    ping = ws.frame_header(ws.PING, 1, masked=False) + b"p"
    framer.feed(server_text({"id": 2}) + ping + server_text({"id": 7}))
    framer.feed(server_text({"id": 3}))
    assert answers == [(OK, 1), (VERIFY_FAILED, 0), (OK, 0)]
    assert len(replies) == 1 and not matcher.outstanding
