"""The per-request table's text (``_report/requests.py``) on a result built in memory: a
long name is cut in the table and whole on its line below, the rows stay in 80 columns,
and a load without a mix has no table."""

from __future__ import annotations

from dataclasses import replace

from factories import make_result

from pytest_netbench._model import LatencySummary, RequestStats
from pytest_netbench._report.requests import request_lines, request_rows

LONG = "GET /api/v1/organisations/${org.id}/members?page=${page}"


def _kind(name: str, ok: int) -> RequestStats:
    return RequestStats(
        name=name,
        method="GET",
        path=name.removeprefix("GET "),
        duration_s=1.0,
        sent=ok,
        ok=ok,
        errors={},
        in_flight=0,
        status_codes={200: ok},
        latency=LatencySummary(count=ok, p50_ms=1.25, p99_ms=12.5, p999_ms=99.5, max_ms=120.0),
    )


def test_a_long_name_is_cut_in_the_table_and_whole_below_it() -> None:
    result = replace(
        make_result(30), by_request={LONG: _kind(LONG, 20), "short": _kind("short", 10)}
    )
    lines = request_lines(result, 80)
    assert [line[2:22].rstrip() for line in lines[1:4]] == [LONG[:19] + "~", "short", "all"]
    assert max(len(line) for line in lines[:4]) == 80
    assert any(line.strip().startswith(LONG) for line in lines[4:])  # its own line, whole
    assert [row.name for row in request_rows(result)] == [LONG, "short", "all"]


def test_names_that_would_read_alike_cut_are_kept_whole() -> None:
    names = ["GET /search?q=" + "x" * 30 + "a", "GET /search?q=" + "x" * 30 + "b"]
    result = replace(make_result(30), by_request={n: _kind(n, 15) for n in names})
    table = request_lines(result, 80)[1:3]
    assert [line.split()[:2] for line in table] == [n.split() for n in names]


def test_a_load_without_a_mix_has_no_table() -> None:
    assert request_lines(make_result(30), 80) == [] and request_rows(make_result(30)) == []
