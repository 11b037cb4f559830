"""Checks on responses, as k6's ``check``: each named, its passes and failures counted.

A check is data (:class:`Check`), written the way the command line takes it
(``--check``), one compact expression a check::

    status 200            status 200,204      status 200-299      status 2xx
    body contains Welcome body !contains Error body matches ^<html
    json user.id exists   json user.id == 42  json items.0.name == "pen"
    header Content-Type contains json         header ETag exists
    no error page: body !contains Error       (a name, then the expression)

A check without a name is named by its expression. A response fails a check when the
check does not hold for it; a response that fails one or more checks is a ``verify``
error of the first of them, so ``sent == ok + errors_total + in_flight`` still holds (a
4xx/5xx response stays a ``status`` error, and its checks are counted all the same).
:class:`CheckStats` are one check's figures in a result (``LoadResult.checks[NAME]``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_netbench._errors import SpecError
from pytest_netbench._public import publish

CheckSubject = Literal["status", "body", "json", "header"]
SUBJECTS: tuple[CheckSubject, ...] = ("status", "body", "json", "header")
CHECK_GRAMMAR = (
    "status 200|200,204|200-299|2xx; body contains TEXT|!contains TEXT|matches REGEX;"
    " json PATH exists|== VALUE; header NAME exists|contains TEXT|== VALUE|matches REGEX;"
    " optionally 'NAME: ' before it"
)


@dataclass(frozen=True, slots=True)
class Check:
    """One check of every response (``http_load(url, checks=[...])``, or of one kind of a
    mix: ``Request(..., checks=[...])``). ``op``: ``in`` (status), ``contains``,
    ``lacks``, ``matches``, ``exists``, ``equals``; ``field``: the JSON path or header
    name; ``value``: the text, pattern or JSON value; ``statuses``: inclusive ranges."""

    name: str
    subject: CheckSubject
    op: str
    field: str = ""
    value: str = ""
    statuses: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.subject == "header":
            # A header's name and value travel as bytes a server writes in Latin-1.
            for what, text in (("name", self.field), ("value", self.value)):
                try:
                    text.encode("latin-1")
                except UnicodeEncodeError:
                    raise SpecError(
                        f"header check {self.expression!r}: a header's {what} is Latin-1"
                        f" text, and {text!r} is not"
                    ) from None

    @classmethod
    def parse(cls, text: str, name: str = "") -> Check:
        """A check from its text form (see the module doc); :class:`SpecError` saying
        what cannot be read."""
        return parse_check(text, name)

    @property
    def expression(self) -> str:
        """The check as ``--check`` writes it (without its name)."""
        if self.subject == "status":
            return f"status {self.value}"
        op = {"lacks": "!contains", "equals": "=="}.get(self.op, self.op)
        words = (
            [self.subject, self.field, op, self.value]
            if self.field
            else [
                self.subject,
                op,
                self.value,
            ]
        )
        return " ".join(w for w in words if w)

    @property
    def text(self) -> str:
        """Name and expression, as ``--check`` takes them back."""
        expression = self.expression
        return expression if self.name == expression else f"{self.name}: {expression}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "check": self.expression}


@dataclass(frozen=True, slots=True)
class CheckStats:
    """One check's figures in a result: the responses it held for and those it did not
    (``LoadResult.checks[NAME]``)."""

    name: str
    check: str
    passes: int
    failures: int

    @property
    def total(self) -> int:
        return self.passes + self.failures

    @property
    def rate(self) -> float:
        """The pass rate: passes per response checked (1.0 when none was checked)."""
        return self.passes / self.total if self.total else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "passes": self.passes,
            "failures": self.failures,
            "rate": self.rate,
        }

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any]) -> CheckStats:
        return cls(name, str(data.get("check", "")), int(data["passes"]), int(data["failures"]))


_NAMED = re.compile(r"^(?P<name>[^:]+?)\s*:\s+(?P<rest>\S.*)$", re.DOTALL)
_STATUS_PART = re.compile(r"^(?:(\d{3})(?:-(\d{3}))?|([1-5])xx)$", re.IGNORECASE)


def parse_check(text: str, name: str = "") -> Check:
    """``[NAME: ]EXPRESSION`` -> a :class:`Check` (see the module doc)."""
    if not isinstance(text, str):
        raise SpecError(f"a check is a Check or its text, e.g. 'body contains ok'; got {text!r}")
    expression = text.strip()
    first = expression.split(None, 1)[0].lower() if expression else ""
    if first not in SUBJECTS:
        named = _NAMED.match(expression)
        if named is None:
            raise SpecError(f"cannot read check {text!r}: write {CHECK_GRAMMAR}")
        name = name or named["name"].strip()
        expression = named["rest"].strip()
        first = expression.split(None, 1)[0].lower()
        if first not in SUBJECTS:
            raise SpecError(f"cannot read check {text!r}: write {CHECK_GRAMMAR}")
    subject: CheckSubject = first
    rest = expression.split(None, 1)[1].strip() if " " in expression else ""
    if not rest:
        raise SpecError(f"check {text!r} says what it looks at but not what it wants: {_HINT}")
    check = _PARSERS[subject](rest, text)
    return Check(
        name or check.expression, check.subject, check.op, check.field, check.value, check.statuses
    )


_HINT = "e.g. 'status 200', 'body contains ok', 'json id exists', 'header ETag exists'"


def _status(rest: str, text: str) -> Check:
    ranges = []
    for part in rest.replace(" ", "").split(","):
        match = _STATUS_PART.match(part)
        if match is None:
            raise SpecError(
                f"check {text!r}: {part!r} is no status; write 200, 200,204, 200-299 or 2xx"
            )
        if match[3]:
            low = int(match[3]) * 100
            ranges.append((low, low + 99))
            continue
        low = int(match[1])
        high = int(match[2]) if match[2] else low
        if not 100 <= low <= high <= 999:
            raise SpecError(f"check {text!r}: {part!r} is no range of statuses from 100 to 999")
        ranges.append((low, high))
    return Check(
        "",
        "status",
        "in",
        value=",".join(rest.replace(" ", "").lower().split(",")),
        statuses=tuple(ranges),
    )


def _operation(words: str, text: str, *, field: str) -> tuple[str, str]:
    """``contains X`` / ``!contains X`` / ``matches RE`` / ``== V`` / ``exists``."""
    op, _, value = words.partition(" ")
    value = value.strip()
    op = {"!contains": "lacks", "==": "equals", "matches": "matches"}.get(op, op)
    if op == "exists":
        if value:
            raise SpecError(f"check {text!r}: nothing follows 'exists'")
        return op, ""
    if op not in ("contains", "lacks", "matches", "equals"):
        raise SpecError(
            f"check {text!r}: unknown test {words.split()[0]!r} of {field}; use contains,"
            " !contains, matches, == or exists"
        )
    if not value:
        raise SpecError(f"check {text!r}: '{words.split()[0]}' needs a value after it")
    if op == "matches":
        try:
            re.compile(value)
        except re.error as exc:
            raise SpecError(f"check {text!r}: the pattern {value!r} is no regex ({exc})") from None
    return op, value


def _body(rest: str, text: str) -> Check:
    op, value = _operation(rest, text, field="a body")
    if op not in ("contains", "lacks", "matches"):
        raise SpecError(f"check {text!r}: a body check is contains, !contains or matches")
    return Check("", "body", op, value=value)


def _json(rest: str, text: str) -> Check:
    path, _, words = rest.partition(" ")
    op, value = _operation(words.strip() or "exists", text, field="a JSON field")
    if op not in ("exists", "equals"):
        raise SpecError(f"check {text!r}: a JSON check is 'json PATH exists' or 'json PATH == V'")
    return Check("", "json", op, field=path.lstrip("."), value=value)


def _header(rest: str, text: str) -> Check:
    header, _, words = rest.partition(" ")
    op, value = _operation(words.strip() or "exists", text, field="a header")
    return Check("", "header", op, field=header.rstrip(":"), value=value)


_PARSERS = {"status": _status, "body": _body, "json": _json, "header": _header}


def json_value(text: str) -> object:
    """What ``json PATH == TEXT`` compares with: TEXT as JSON (``42``, ``true``,
    ``"pen"``), else TEXT itself as a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def checks_from(value: object, *, where: str = "checks") -> tuple[Check, ...]:
    """``checks=`` as given (a list of Check or text, or a mapping of name -> text) as
    checks, each named; two of one name that say different things are refused."""
    if value is None:
        return ()
    items: list[Check] = []
    if isinstance(value, Mapping):
        for name, text in value.items():
            items.append(text if isinstance(text, Check) else parse_check(str(text), str(name)))
    elif isinstance(value, (str, Check)):
        items.append(value if isinstance(value, Check) else parse_check(value))
    elif isinstance(value, Sequence):
        for entry in value:
            items.append(entry if isinstance(entry, Check) else parse_check(entry))
    else:
        raise SpecError(
            f"{where} must be a list of checks such as ['status 200', 'body contains ok'],"
            f" got {value!r}"
        )
    return tuple(items)


def check_slots(
    load: Sequence[Check], by_kind: Sequence[Sequence[Check]]
) -> tuple[tuple[Check, ...], tuple[int, ...]]:
    """The distinct checks of a load (the load's, then each kind's own) and, per kind of a
    mix (one entry without a mix), the bits of the checks that apply to it: bit ``i`` is
    ``checks[i]``."""
    slots: list[Check] = []
    for check in [*load, *(c for kind in by_kind for c in kind)]:
        same = [s for s in slots if s.name == check.name]
        if same and same[0] != check:
            raise SpecError(
                f"two checks are named {check.name!r} but say different things"
                f" ({same[0].expression!r}, {check.expression!r}): give each its own name"
            )
        if not same:
            slots.append(check)
    base = 0
    for check in load:
        base |= 1 << slots.index(check)
    masks = []
    for kind in by_kind or ((),):
        mask = base
        for check in kind:
            mask |= 1 << slots.index(check)
        masks.append(mask)
    return tuple(slots), tuple(masks)


publish(globals())
