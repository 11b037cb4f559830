"""SLO expressions: the forms they take, errors that name the bad part, and checks that
give each term's value."""

from __future__ import annotations

import math

import pytest

from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.slo import TermCheck, error_rate, parse_slo
from pytest_netbench._model import LatencySummary, LoadResult


def result(*, p99_ms: float = 20.0, ok: int = 990, errors: int = 10) -> LoadResult:
    return LoadResult(
        mode="open",
        url="http://127.0.0.1:1/",
        duration_s=1.0,
        sent=ok + errors,
        ok=ok,
        errors={"timeout": errors},
        in_flight=0,
        status_codes={200: ok},
        bytes_read=0,
        bytes_written=0,
        latency=LatencySummary(count=ok, p50_ms=p99_ms / 4, p99_ms=p99_ms),
    )


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("p99_ms < 50", ["p99_ms < 50"]),
        ("p99_ms<50", ["p99_ms < 50"]),
        ("p99_ms<50 and errors_total == 0", ["p99_ms < 50", "errors_total == 0"]),
        (
            "p99_ms <= 50, rps >= 1e3 AND errors.reset != 3",
            ["p99_ms <= 50", "rps >= 1000", "errors.reset != 3"],
        ),
        ("error_rate < .01", ["error_rate < 0.01"]),
        ("server.cpu_ms_per_request > -1.5", ["server.cpu_ms_per_request > -1.5"]),
    ],
)
def test_the_forms_an_slo_takes(text: str, terms: list[str]) -> None:
    assert [t.text for t in parse_slo(text).terms] == terms


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("p99_ms <", "'p99_ms <'"),
        ("p99_ms < fifty", "'p99_ms < fifty'"),
        ("p99_ms => 5", "'p99_ms => 5'"),
        ("p99 < 50", "unknown metric 'p99'"),
        ("p99_ms < 50 and latency < 3", "'latency < 3'"),
        ("valid == 1", "not a number"),
        ("p99_ms < 50 or rps > 10", "not 'or'"),
        ("p99_ms < 50,, rps > 1", "empty term"),
        ("  ", "empty"),
    ],
)
def test_a_bad_slo_is_a_spec_error_naming_the_bad_part(text: str, named: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_slo(text)
    assert named in str(info.value)


def test_a_result_meeting_every_term_passes() -> None:
    verdict = parse_slo("p99_ms < 50 and error_rate <= 0.01").evaluate(result())
    assert verdict.passed
    assert verdict.failed == ()
    assert [c.value for c in verdict.checks] == [20.0, 0.01]


def test_a_failed_term_is_named_with_its_value() -> None:
    verdict = parse_slo("p99_ms < 50, errors_total == 0").evaluate(result(p99_ms=63.25))
    assert not verdict.passed
    assert [(c.term.text, c.value) for c in verdict.failed] == [
        ("p99_ms < 50", 63.25),
        ("errors_total == 0", 10.0),
    ]
    assert "p99_ms = 63.25 (needs < 50): FAILED" in verdict.describe()


def test_no_latency_at_all_fails_a_latency_bound() -> None:
    nothing = result(p99_ms=math.nan, ok=0, errors=5)
    (check,) = parse_slo("p99_ms < 50").evaluate(nothing).checks
    assert not check.passed
    assert check.to_dict()["value"] is None
    assert error_rate(nothing) == 1.0


def test_near_bound_is_within_the_margin_either_side() -> None:
    term = parse_slo("p99_ms < 50").terms[0]
    assert term.check(result(p99_ms=45.0)).near_bound(0.2)
    assert term.check(result(p99_ms=58.0)).near_bound(0.2)
    assert not term.check(result(p99_ms=20.0)).near_bound(0.2)
    assert not parse_slo("errors_total == 0").terms[0].check(result()).near_bound(0.2)


def test_a_check_survives_its_dict() -> None:
    check = parse_slo("p99_ms < 50").terms[0].check(result(p99_ms=63.0))
    assert TermCheck.from_dict(check.to_dict()) == check
