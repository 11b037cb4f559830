"""Where the time went between two profiles: functions ranked by their change in CPU per
request, with the sampling noise rule (the profiles are data here; the A/B run that makes
them is in tests/integration/test_server_profiles.py)."""

from __future__ import annotations

import random
from dataclasses import replace

from factories import make_result

from pytest_netbench._compare.gate import Comparison, compare_runs
from pytest_netbench._compare.profile_diff import profiled, where_time_went
from pytest_netbench._compare.records import Record
from pytest_netbench._model import LoadResult, ServerProfile
from pytest_netbench._report.comparison import (
    comparison_to_dict,
    render_comparison_markdown,
    render_comparison_text,
)
from pytest_netbench._report.html.profile import where_html


def _sampled(rng: random.Random, weights: dict[str, float], n: int, cpu_ms: float) -> ServerProfile:
    names = list(weights)
    counts: dict[str, int] = {}
    for name in rng.choices(names, weights=[weights[k] for k in names], k=n):
        stack = f"[server process];main;{name}"
        counts[stack] = counts.get(stack, 0) + 1
    return ServerProfile(tool="py-spy", samples=n, cpu_ms_per_request=cpu_ms, folded=counts)


BASE = {"render_page": 0.5, "write": 0.3, "parse": 0.2}


def test_the_function_that_took_the_added_cpu_comes_first_with_most_of_it() -> None:
    rng = random.Random(7)
    base = _sampled(rng, BASE, 400, 1.0)
    # HEAD adds 0.6 ms of audit_log to a 1.0 ms request: 1.6 ms, audit_log 0.375 of it.
    head = _sampled(
        rng, {**{k: v / 1.6 for k, v in BASE.items()}, "audit_log": 0.6 / 1.6}, 400, 1.6
    )
    where = where_time_went("t.py::test", base, head)
    first = where.changes[0]
    assert first.name == "audit_log" and first.beyond_noise
    assert 0.45 < first.change_ms < 0.75
    assert first.share_of_change > 0.7
    assert [c.name for c in where.named] == ["audit_log"]


def test_an_aa_comparison_names_nothing() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        where = where_time_went("t", _sampled(rng, BASE, 300, 1.0), _sampled(rng, BASE, 300, 1.0))
        assert where.named == (), (seed, where.changes)


def test_the_verdicts_show_where_the_time_went_in_every_form() -> None:
    rng = random.Random(3)
    base = _sampled(rng, BASE, 400, 1.0)
    head = _sampled(rng, {**BASE, "audit_log": 0.6}, 400, 1.6)
    comparison = Comparison(items=(), where=(where_time_went("t.py::test", base, head),))
    text = render_comparison_text(comparison)
    assert "Where the time went: t.py::test" in text
    assert "* audit_log" in text.split("Where the time went")[1].splitlines()[3]
    markdown = render_comparison_markdown(comparison)
    assert "#### Where the time went: `t.py::test`" in markdown and "`audit_log` *" in markdown
    data = comparison_to_dict(comparison)["where_the_time_went"][0]
    assert data["functions"][0]["name"] == "audit_log" and data["functions"][0]["beyond_noise"]


def test_only_a_profile_with_stacks_is_read() -> None:
    with_problem = replace(make_result(5), profile=ServerProfile(problem="no py-spy"))
    fine = replace(make_result(5), profile=ServerProfile(samples=1, folded={"a": 1}))
    assert profiled([make_result(5), with_problem]) is None
    assert profiled([with_problem, fine]) is fine.profile


def test_the_html_comparison_shows_where_the_time_went() -> None:
    rng = random.Random(3)
    base = _sampled(rng, BASE, 400, 1.0)
    head = _sampled(rng, {**BASE, "audit_log": 0.6}, 400, 1.6)
    html = where_html([where_time_went("t.py::test", base, head)])
    assert "Where the time went: <code>t.py::test</code>" in html
    first_row = html.split("<tbody>")[1].split("</tr>")[0]
    assert "<b>audit_log</b> *" in first_row and 'class="diff-bar"' in first_row
    assert where_html([]) == ""


def test_a_stored_baseline_with_profiles_gets_where_the_time_went_too() -> None:
    rng = random.Random(5)
    base = replace(make_result(50, p50_ms=1.0), profile=_sampled(rng, BASE, 400, 1.0))
    head_profile = _sampled(rng, {**BASE, "audit_log": 0.6}, 400, 1.6)
    head = replace(make_result(50, p50_ms=1.0), profile=head_profile)
    plain = make_result(50, p50_ms=1.0)

    def records(result: LoadResult, nodeid: str = "t.py::test") -> list[Record]:
        return [Record(nodeid=nodeid, function="test", params={}, result=result)]

    comparison = compare_runs(records(head) + records(plain, "t.py::other"), records(base))
    (where,) = comparison.where
    assert where.key == "t.py::test" and where.named[0].name == "audit_log"
    assert compare_runs(records(plain), records(base)).where == ()  # no profile this run
