"""Checks at work, sans-IO: a response's status, headers and body in, the checks it
failed out, as bits of one int.

A :class:`CheckingResponseFramer` is the :class:`ResponseFramer` of a load with checks:
httptools hands it each header (a C ``dict.__setitem__``) and each piece of the body (a C
``list.append``), and as a response completes :class:`ResponseChecks` tests it. What it
delivers is one int, the status with the failed checks' bits above it
(:func:`with_failures`), so every engine path that hands a status to the run rules hands
this on unchanged; the rules split it (``RunAccounting.record``). A status alone is below
``CHECK_BASE``, so the ok path never looks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from pytest_netbench._model.checks import Check, json_value
from pytest_netbench._proto.framing import OnError, OnResponse
from pytest_netbench._proto.http import ResponseFramer, _is_length_delimited

# A status is below 1024; the failed checks' bits go above it.
CHECK_SHIFT = 10
CHECK_BASE = 1 << CHECK_SHIFT
STATUS_BITS = CHECK_BASE - 1

Test = Callable[[int, dict[bytes, bytes], bytes], bool]


def with_failures(status: int, failed: int) -> int:
    """The code a checked response is delivered as: its status, its failed checks' bits."""
    return status | failed << CHECK_SHIFT


def split_code(code: int) -> tuple[int, int]:
    """``(status, failed checks' bits)`` of a delivered code."""
    return code & STATUS_BITS, code >> CHECK_SHIFT


class ResponseChecks:
    """A load's checks, compiled once per worker: :meth:`failed` gives the bits of those
    a response does not pass (bit ``i``: ``checks[i]``)."""

    __slots__ = ("checks", "needs_body", "tests")

    def __init__(self, checks: Sequence[Check]) -> None:
        self.checks = tuple(checks)
        self.tests: tuple[tuple[int, Test], ...] = tuple(
            (1 << index, _compile(check)) for index, check in enumerate(self.checks)
        )
        self.needs_body = any(c.subject in ("body", "json") for c in self.checks)

    def failed(self, status: int, headers: dict[bytes, bytes], body: bytes) -> int:
        failed = 0
        for bit, test in self.tests:
            if not test(status, headers, body):
                failed |= bit
        return failed

    def describe_failure(self, failed: int) -> str:
        """What a ``verify`` error of these failed bits says: the first check's name."""
        for index, check in enumerate(self.checks):
            if failed >> index & 1:
                shown = "" if check.name == check.expression else f" ({check.expression})"
                return f"check {check.name!r} failed{shown}"
        return "a check failed"


def _compile(check: Check) -> Test:
    if check.subject == "status":
        ranges = check.statuses
        return lambda status, headers, body: any(low <= status <= high for low, high in ranges)
    if check.subject == "body":
        return _text_test(check.op, check.value)
    if check.subject == "json":
        return _json_test(check)
    return _header_test(check)


def _text_test(op: str, value: str) -> Test:
    needle = value.encode()
    if op == "contains":
        return lambda status, headers, body: needle in body
    if op == "lacks":
        return lambda status, headers, body: needle not in body
    pattern = re.compile(needle)
    return lambda status, headers, body: pattern.search(body) is not None


def _json_test(check: Check) -> Test:
    path = [int(p) if p.isdigit() else p for p in check.field.split(".") if p]
    exists = check.op == "exists"
    want = None if exists else json_value(check.value)

    def test(status: int, headers: dict[bytes, bytes], body: bytes) -> bool:
        try:
            value: Any = json.loads(body)
        except ValueError:
            return False
        for part in path:
            if isinstance(part, int) and isinstance(value, list) and part < len(value):
                value = value[part]
            elif isinstance(value, dict) and str(part) in value:
                value = value[str(part)]
            else:
                return False
        return exists or value == want

    return test


def _header_test(check: Check) -> Test:
    name = check.field.lower().encode("latin-1")
    op, value = check.op, check.value

    def find(headers: dict[bytes, bytes]) -> bytes | None:
        for key, found in headers.items():
            if key.lower() == name:
                return found
        return None

    if op == "exists":
        return lambda status, headers, body: find(headers) is not None
    if op == "equals":
        wanted = value.encode("latin-1")
        return lambda status, headers, body: (find(headers) or b"").strip() == wanted
    text = _text_test(op, value)

    def test(status: int, headers: dict[bytes, bytes], body: bytes) -> bool:
        found = find(headers)
        return found is not None and text(status, headers, found)

    return test


class CheckingResponseFramer(ResponseFramer):
    """A :class:`ResponseFramer` that tests each final response with the load's checks
    and delivers :func:`with_failures` of its status (see the module doc)."""

    __slots__ = ("_body", "_checks", "on_body")

    def __init__(self, on_response: OnResponse, on_error: OnError, checks: ResponseChecks) -> None:
        self._checks = checks
        self._body: list[bytes] = []
        # Set before the parser is made: httptools looks its callbacks up once. A body no
        # check reads is not kept (a status check of 4 MiB answers holds none of them).
        if checks.needs_body:
            self.on_body = self._body.append
        super().__init__(on_response, on_error)

    def on_message_complete(self) -> None:
        status = self._status
        if status >= 200:  # an interim 1xx is no answer to check
            body = self._body
            failed = self._checks.failed(status, self._headers, b"".join(body))
            body.clear()
            if failed:
                self._status = status | failed << CHECK_SHIFT
        else:
            self._body.clear()
        ResponseFramer.on_message_complete(self)

    def feed_eof(self) -> bool:
        status = self._status
        if not self.failed and status >= 200 and not _is_length_delimited(self._headers):
            failed = self._checks.failed(status, self._headers, b"".join(self._body))
            self._body.clear()
            self._status = with_failures(status, failed)
        return ResponseFramer.feed_eof(self)


def checking_framer(checks: ResponseChecks) -> Callable[[OnResponse, OnError], ResponseFramer]:
    """A framer factory (``Exchange.make_framer``) for a load with ``checks``."""

    def make(on_response: OnResponse, on_error: OnError) -> ResponseFramer:
        return CheckingResponseFramer(on_response, on_error, checks)

    return make
