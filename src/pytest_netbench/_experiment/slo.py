"""Service-level objectives as short expressions: ``"p99_ms < 50"``,
``"p99_ms<50 and errors_total == 0"``, ``"p99_ms < 50, error_rate <= 0.001"``.

A term is ``<metric> <op> <number>``; the metric is a figure of a
:class:`~pytest_netbench.LoadResult` by name (as in ``_compare.metrics``: ``p99_ms``, ``rps``,
``errors_total``, ``server.cpu_ms_per_request``, ``errors.reset``, one request kind's
``by_request.search.p99_ms``), or ``error_rate``
(errors per request sent). Terms are joined by ``and`` or commas; all must hold. Checking a
result says, for every term, the value it had and whether it passed, as k6 prints its
thresholds.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netbench._compare.metrics import METRIC_PATTERN, check_metrics, metric_value
from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadResult
from pytest_netbench._public import publish

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_TERM = re.compile(
    rf"^\s*(?P<metric>{METRIC_PATTERN})\s*(?P<op><=|>=|==|!=|<|>)\s*"
    r"(?P<bound>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
_JOINER = re.compile(r"\s*,\s*|\s+and\s+", re.IGNORECASE)
# Metrics an SLO may name that are not attributes of a LoadResult.
_DERIVED = ("error_rate",)
_HOW = "write terms as <metric> <op> <number> (op: <, <=, >, >=, ==, !=), e.g. 'p99_ms < 50'"


def error_rate(result: LoadResult) -> float:
    """Failed requests per request sent (0 when nothing was sent)."""
    return result.errors_total / result.sent if result.sent else 0.0


def slo_metric(result: LoadResult, metric: str) -> float:
    """The value of ``metric`` for ``result`` (a LoadResult figure, or ``error_rate``)."""
    if metric == "error_rate":
        return error_rate(result)
    return metric_value(result, metric)


@dataclass(frozen=True, slots=True)
class SloTerm:
    metric: str
    op: str
    bound: float

    @property
    def text(self) -> str:
        return f"{self.metric} {self.op} {_number(self.bound)}"

    def check(self, result: LoadResult) -> TermCheck:
        value = slo_metric(result, self.metric)
        # nan (no ok response, so no latency) never meets a bound.
        passed = not math.isnan(value) and _OPERATORS[self.op](value, self.bound)
        return TermCheck(self, value, passed)


@dataclass(frozen=True, slots=True)
class TermCheck:
    """One term checked against one result."""

    term: SloTerm
    value: float
    passed: bool

    def near_bound(self, margin: float) -> bool:
        """The value is within ``margin`` (a fraction of the bound) of the bound, either
        side: a verdict that noise could have flipped."""
        if self.term.op in ("==", "!=") or math.isnan(self.value) or self.term.bound == 0:
            return False
        return abs(self.value - self.term.bound) <= margin * abs(self.term.bound)

    @property
    def value_text(self) -> str:
        """The value as the checks print it (``n/a`` for nan: no figure)."""
        return _number(self.value)

    def describe(self) -> str:
        mark = "ok" if self.passed else "FAILED"
        needs = f"{self.term.op} {_number(self.term.bound)}"
        return f"{self.term.metric} = {self.value_text} (needs {needs}): {mark}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "term": self.term.text,
            "metric": self.term.metric,
            "op": self.term.op,
            "bound": self.term.bound,
            "value": None if math.isnan(self.value) else self.value,
            "passed": self.passed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TermCheck:
        value = data.get("value")
        term = SloTerm(str(data["metric"]), str(data["op"]), float(data["bound"]))
        return cls(term, math.nan if value is None else float(value), bool(data["passed"]))


@dataclass(frozen=True, slots=True)
class SloVerdict:
    """Every term's check; the SLO holds when all of them passed."""

    checks: tuple[TermCheck, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> tuple[TermCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def describe(self) -> str:
        return "; ".join(c.describe() for c in (self.failed or self.checks))


@dataclass(frozen=True, slots=True)
class Slo:
    """All of its terms must hold."""

    terms: tuple[SloTerm, ...]

    @property
    def text(self) -> str:
        return " and ".join(t.text for t in self.terms)

    def evaluate(self, result: LoadResult) -> SloVerdict:
        return SloVerdict(tuple(t.check(result) for t in self.terms))

    def with_term(self, term: SloTerm) -> Slo:
        return Slo((*self.terms, term))


def parse_slo(text: str | Slo, *, what: str = "SLO") -> Slo:
    """Read an SLO expression; raise SpecError naming the part that cannot be read.
    ``what`` names the expression in those messages (the CLI's ``--threshold``: "threshold")."""
    if isinstance(text, Slo):
        return text
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"the {what} is empty: {_HOW}")
    if re.search(r"\bor\b", text, re.IGNORECASE):
        raise SpecError(
            f"{what} {text!r}: terms can only all hold; join them with 'and' or ',', not 'or'"
        )
    terms = []
    for part in _JOINER.split(text.strip()):
        if not part.strip():
            raise SpecError(f"{what} {text!r} has an empty term (a stray 'and' or ','): {_HOW}")
        terms.append(_parse_term(part, text, what))
    return Slo(tuple(terms))


def check_slo_requests(slo: Slo, requests: Iterable[str], *, what: str = "SLO") -> None:
    """Every per-request term (``by_request.search.p99_ms < 80``) names a request kind of
    the load, given as ``requests`` (a mix's Request names; none without a mix): checked
    from the spec, before any socket, so a misspelt name is refused, not read as nothing."""
    names = tuple(requests)
    for term in slo.terms:
        if term.metric.startswith("by_request."):
            try:
                check_metrics([term.metric], requests=names)
            except SpecError as exc:
                raise SpecError(f"{what} term {term.text!r}: {exc}") from None


def _parse_term(part: str, whole: str, what: str) -> SloTerm:
    match = _TERM.match(part)
    if match is None:
        raise SpecError(f"cannot read {what} term {part.strip()!r} in {whole!r}: {_HOW}")
    metric = match["metric"]
    if metric not in _DERIVED:
        try:
            check_metrics([metric])
        except SpecError as exc:
            raise SpecError(
                f"{what} term {part.strip()!r}: {exc}; or error_rate (errors per request sent)"
            ) from None
    return SloTerm(metric, match["op"], float(match["bound"]))


def _number(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:g}" if abs(value) < 1e6 else f"{value:,.0f}"


publish(globals())
