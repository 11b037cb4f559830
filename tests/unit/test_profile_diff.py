"""Where the time went between two profiles: functions ranked by their change in CPU per
request, with the sampling noise rule (the profiles are data here; the A/B run that makes
them is in tests/integration/test_server_profiles.py)."""

from __future__ import annotations

import random
import re
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
from pytest_netbench._report.html.profile import diff_flame_html, where_html


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


def test_a_function_head_no_longer_runs_is_listed_last_as_saved() -> None:
    rng = random.Random(11)
    many = {f"helper_{i}": 0.02 for i in range(20)}
    base = _sampled(rng, {**BASE, **many, "audit_log": 0.6}, 600, 1.6)
    head = _sampled(rng, {**BASE, **many}, 600, 1.0)
    where = where_time_went("t.py::test", base, head)
    last = where.changes[-1]
    assert last.name == "audit_log" and last.beyond_noise and last.change_ms < -0.4
    assert [c.name for c in where.named] == ["audit_log"]
    assert [c.change_ms for c in where.changes] == sorted(
        (c.change_ms for c in where.changes), reverse=True
    )


def _frames(html: str) -> dict[str, tuple[float, str, str]]:
    """Each frame of a flame graph: its width (%), its colour and its tooltip."""
    found = re.findall(
        r'<div class="fr" style="width:([0-9.]+)%"><div class="fn" style="background:([^"]+)"'
        r' title="([^"]*)">([^<]*)</div>',
        html,
    )
    return {name: (float(width), colour, title) for width, colour, title, name in found}


def test_the_differential_flame_graph_reddens_the_function_that_spent_the_added_cpu() -> None:
    rng = random.Random(3)
    base = _sampled(rng, BASE, 400, 1.0)
    # HEAD: 1.6 ms a request, audit_log 0.6 of it; the rest as in BASE.
    head = _sampled(
        rng, {**{k: v / 1.6 for k, v in BASE.items()}, "audit_log": 0.6 / 1.6}, 400, 1.6
    )
    where = where_time_went("t.py::test", base, head)
    html = diff_flame_html(where)
    frames = _frames(html)
    width, colour, title = frames["audit_log"]
    assert colour == "hsl(0,80%,58%)"  # red, the deepest: the largest change of its own
    assert title.startswith("audit_log: 0.0000 \u2192 ") and "beyond noise" in title
    assert 0.25 < width / 100 < 0.5  # of main's CPU per request in head
    # Its callers: pale red (they spent more, but not themselves); the rest unchanged.
    assert frames["main"][1] == frames["[server process]"][1] == "hsl(0,49%,86%)"
    assert frames["main"][0] == 100.0 and frames["[server process]"][0] == 100.0
    assert frames["render_page"][1] == "hsl(40,8%,86%)"
    # The whole width is head's (the costlier side): base's ends at the dashed line.
    assert "left:62.50%" in html and "dashed" in where_html([where])
    assert "Differential flame graph: base 1.000 &rarr; head 1.600 ms" in html


def test_the_differential_flame_graph_of_an_improvement_is_blue_and_narrower() -> None:
    rng = random.Random(4)
    base = _sampled(rng, {"render_page": 0.5, "parse": 0.5}, 600, 2.0)
    # render_page 1.0 -> 0.2 ms a request; parse 1.0 ms in both.
    head = _sampled(rng, {"render_page": 0.2 / 1.2, "parse": 1.0 / 1.2}, 600, 1.2)
    frames = _frames(diff_flame_html(where_time_went("t", base, head)))
    assert frames["[server process]"][0] == 60.0  # head's 1.2 of base's 2.0 ms
    assert frames["render_page"][1] == "hsl(212,80%,58%)"  # saved, the largest change
    assert frames["parse"][1] == "hsl(40,8%,86%)"  # within noise
    assert frames["main"][1] == "hsl(212,49%,86%)"  # their caller: pale blue


def test_no_differential_flame_graph_without_both_profiles_stacks() -> None:
    where = where_time_went("t", ServerProfile(), ServerProfile())
    assert diff_flame_html(where) == ""
