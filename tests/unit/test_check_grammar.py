"""Checks as users write them (``--check``, ``checks=``) and as the sans-IO framer runs
them on response bytes: every form of the grammar, the errors that say what to write, and
the verdict on a response whatever its framing or however its bytes are split."""

from __future__ import annotations

import pytest

from pytest_netbench import Check, CheckStats, LoadResult, Request, SpecError, http_spec
from pytest_netbench._model.checks import check_slots, checks_from
from pytest_netbench._proto.checks import (
    CheckingResponseFramer,
    ResponseChecks,
    split_code,
)


@pytest.mark.parametrize(
    ("text", "name", "expression"),
    [
        ("status 200", "status 200", "status 200"),
        ("status 200, 204", "status 200,204", "status 200,204"),
        ("status 200-299", "status 200-299", "status 200-299"),
        ("status 2xx", "status 2xx", "status 2xx"),
        ("body contains Welcome back", "body contains Welcome back", "body contains Welcome back"),
        ("no error: body !contains Error", "no error", "body !contains Error"),
        ("body matches ^<html", "body matches ^<html", "body matches ^<html"),
        ("json user.id exists", "json user.id exists", "json user.id exists"),
        ("json .user.id == 42", "json user.id == 42", "json user.id == 42"),
        ("json ok", "json ok exists", "json ok exists"),
        ("header ETag exists", "header ETag exists", "header ETag exists"),
        ("typed: header Content-Type: contains json", "typed", "header Content-Type contains json"),
    ],
)
def test_the_forms_of_a_check(text: str, name: str, expression: str) -> None:
    check = Check.parse(text)
    assert (check.name, check.expression) == (name, expression)
    assert Check.parse(check.text) == check  # the text form reads back the same


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("status 20", "'20' is no status"),
        ("status 299-200", "no range of statuses"),
        ("body has x", "unknown test 'has' of a body"),
        ("body contains", "'contains' needs a value"),
        ("body matches (", "is no regex"),
        ("json a.b < 3", "unknown test '<' of a JSON field"),
        ("cookie x", "cannot read check 'cookie x'"),
        ("status", "says what it looks at but not what it wants"),
        ("header X exists now", "nothing follows 'exists'"),
        ("header X == €", "a header's value is Latin-1 text, and '€' is not"),
    ],
)
def test_a_check_that_cannot_be_read_says_what_to_write(text: str, words: str) -> None:
    with pytest.raises(SpecError, match=words.replace("(", r"\(")):
        Check.parse(text)


def test_checks_given_as_a_mapping_a_list_or_checks() -> None:
    by_name = checks_from({"home": "body contains Welcome", "ok": "status 200"})
    assert [c.name for c in by_name] == ["home", "ok"]
    assert checks_from(["status 200", Check.parse("body contains x")])[1].value == "x"
    with pytest.raises(SpecError, match="must be a list of checks"):
        checks_from(42)


def test_two_checks_of_one_name_must_say_the_same() -> None:
    with pytest.raises(SpecError, match="two checks are named 'ok' but say different things"):
        http_spec(
            "http://127.0.0.1:8080",
            checks={"ok": "status 200"},
            mix=[Request("GET", "/", checks={"ok": "status 201"})],
        )
    # The same check on the load and a kind is one check, tested once.
    slots, masks = check_slots(
        [Check.parse("status 200")],
        [[Check.parse("status 200")], [Check.parse("body contains x")]],
    )
    assert [c.name for c in slots] == ["status 200", "body contains x"]
    assert masks == (0b01, 0b11)


def test_options_that_cannot_take_checks_are_refused() -> None:
    with pytest.raises(SpecError, match=r"checks on responses are HTTP/1\.1's for now"):
        http_spec("http://127.0.0.1:8080/", protocol="h2", checks=["status 200"])
    with pytest.raises(SpecError, match="a HEAD response has no body to check"):
        http_spec("http://127.0.0.1:8080/", method="HEAD", checks=["status 200"])
    with pytest.raises(SpecError, match=r"unknown option 'check' .* did you mean 'checks'"):
        http_spec("http://127.0.0.1:8080/", check=["status 200"])  # type: ignore[call-arg]


CHECKS = ResponseChecks(
    [
        Check.parse("status 200"),
        Check.parse("body contains Welcome"),
        Check.parse('json user.tags.1 == "b"'),
        Check.parse("header content-type contains json"),
    ]
)
JSON = b'{"user": {"tags": ["a", "b"]}, "note": "Welcome"}'


def _delivered(data: bytes, *, split: int = 0, eof: bool = False) -> list[tuple[int, int]]:
    codes: list[int] = []
    framer = CheckingResponseFramer(lambda code, keep: codes.append(code), print, CHECKS)
    for piece in (data[:split], data[split:]) if split else (data,):
        framer.feed(piece)
    if eof:
        framer.feed_eof()
    return [split_code(code) for code in codes]


def _response(status: int, body: bytes, kind: bytes = b"application/json") -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: ".encode() + kind
    return head + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


@pytest.mark.parametrize("split", [0, 1, 20, 60, 90])
def test_the_framer_checks_each_response_however_it_is_split(split: int) -> None:
    two = _response(200, JSON) + _response(500, b"<h1>Error</h1>", b"text/html")
    assert _delivered(two, split=split) == [(200, 0), (500, 0b1111)]


def test_a_chunked_body_and_one_delimited_by_the_close() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
        b"\r\n\r\n5\r\n" + JSON[:5] + b"\r\n" + f"{len(JSON) - 5:x}".encode() + b"\r\n"
        + JSON[5:] + b"\r\n0\r\n\r\n"
    )  # fmt: skip
    assert _delivered(chunked, split=70) == [(200, 0)]
    closed = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nWelcome"
    assert _delivered(closed, eof=True) == [(200, 0b1100)]
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + _response(200, JSON)
    assert _delivered(interim) == [(200, 0)]


def test_a_result_keeps_its_checks_in_json() -> None:
    stats = CheckStats("no error page", "body !contains Error", passes=90, failures=10)
    assert stats.rate == 0.9 and stats.total == 100
    result = LoadResult.from_dict(
        {
            **_EMPTY.to_dict(),
            "checks": {"no error page": stats.to_dict()},
        }
    )
    assert result.checks == {"no error page": stats}


_EMPTY = LoadResult.from_dict(
    {
        "mode": "closed",
        "url": "http://127.0.0.1/",
        "duration_s": 1.0,
        "sent": 0,
        "ok": 0,
        "errors": {},
        "in_flight": 0,
        "status_codes": {},
        "bytes_read": 0,
        "bytes_written": 0,
        "latency": {},
    }
)
