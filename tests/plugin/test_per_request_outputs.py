"""End-to-end: a mix's figures per request kind in every output of a session (issue 18,
"every endpoint on its own"): the terminal summary's sub-table under the test, the JSON
(per kind, adding up to the load's), the Markdown, the pictures and pytest-benchmark's
JSON (the kinds in ``extra_info``, one benchmark per test).

The hello server answers ``/missing`` with 404 and everything else with 200, so one kind
of the mix fails whole and the others succeed: the rows must tell them apart.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pytest_netbench import LoadResult

MIX_TEST = """
import pytest
from pytest_netbench import Request

MIX = [
    Request("GET", "/items", name="list", weight=2),
    Request("GET", "/missing", name="gone"),
    Request("POST", "/orders", body=b'{"qty": 2}', name="order"),
]


@pytest.mark.parametrize("connections", [1, 2])
def test_shop(netbench, hello, connections):
    srv = hello("--status-for", "/missing=404")
    netbench.http(srv.url, mix=MIX, mix_order="weighted", requests=200,
                  connections=connections)


def test_plain(netbench, hello):
    netbench.http(hello().url, requests=50, connections=1)
"""
KINDS = ["list", "gone", "order"]


def test_every_output_shows_each_request_kind(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(MIX_TEST)
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-json=out.json",
        "--netbench-markdown=out.md",
        "--netbench-plot=plots",
        "--netbench-benchmark-json=bench.json",
    )
    result.assert_outcomes(passed=3)

    # The terminal: under test_shop's matrix a table per load, a row per kind and "all".
    result.stdout.fnmatch_lines(
        [
            "*::test_shop",
            "*per request, connections=1 (latency in ms)",
            "  request * sent * ok * errors * req/s * p50 * p90 * p99 * p99.9 * max",
            "  list * 100 * 100 * 0 *",
            "  gone * 50 * 0 * 50 * 0 * - * - * - * - * -",
            "  order * 50 * 50 * 0 *",
            "  all * 200 * 150 * 50 *",
            "  gone (GET /missing): status 404: 50; errors status 50",
            "*per request, connections=2 (latency in ms)",
            "*::test_plain",
        ]
    )
    plain = result.stdout.str().split("::test_plain", 1)[1]
    assert "per request" not in plain  # no mix, no sub-table
    assert "nan" not in result.stdout.str()

    # The JSON: each kind's figures, adding up to the load's; p99.9 per kind.
    session = json.loads((pytester.path / "out.json").read_text())
    shop = [r["result"] for r in session["records"] if "test_shop" in r["nodeid"]]
    assert len(shop) == 2
    for data in shop:
        kinds = data["by_request"]
        assert list(kinds) == KINDS
        for name, kind in kinds.items():
            assert kind["sent"] == kind["ok"] + kind["errors_total"] + kind["in_flight"], name
        for figure in ("sent", "ok", "errors_total", "in_flight"):
            assert sum(k[figure] for k in kinds.values()) == data[figure], figure
        codes = sum((Counter(k["status_codes"]) for k in kinds.values()), Counter())
        assert codes == Counter(data["status_codes"])
        assert kinds["gone"]["errors"]["status"] == 50 and kinds["gone"]["p999_ms"] is None
        assert kinds["list"]["p999_ms"] == kinds["list"]["latency"]["p999_ms"] > 0

    # The Markdown: a table per load under the matrix, the same counts.
    markdown = (pytester.path / "out.md").read_text()
    assert markdown.index("::test_shop`") < markdown.index("#### Per request: connections=1")
    assert "| request | sent | ok | errors | errors by kind | in flight | status codes |" in (
        markdown
    )
    assert "| gone (`GET /missing`) | 50 | 0 | 50 | status 50 | 0 | 404: 50 |" in markdown
    assert "| **all** | 200 | 150 | 50 | status 50 | 0 | 200: 150, 404: 50 |" in markdown
    assert markdown.count("#### Per request") == 2

    # pytest-benchmark's JSON: a benchmark per test and parametrisation, never per kind;
    # the kinds in extra_info, as in our JSON.
    benchmarks = json.loads((pytester.path / "bench.json").read_text())["benchmarks"]
    assert [b["name"] for b in benchmarks] == [
        "test_shop[1]",
        "test_shop[2]",
        "test_plain",
    ]
    for benchmark, data in zip(benchmarks, shop, strict=False):
        kinds = benchmark["extra_info"]["by_request"]
        assert list(kinds) == KINDS
        for name, kind in kinds.items():
            stored = data["by_request"][name]
            assert {f: kind[f] for f in ("sent", "ok", "errors_total", "p99_ms")} == {
                f: stored[f] for f in ("sent", "ok", "errors_total", "p99_ms")
            }, name
    assert "by_request" not in benchmarks[2]["extra_info"]

    # The pictures: each load of the mix has its spectrum (the lines: see below).
    for connections in (1, 2):
        (picture,) = (pytester.path / "plots").glob(
            f"*test_shop-connections={connections}-latency.png"
        )
        assert picture.stat().st_size > 0
    _spectrum_lines_from_the_stored_result(shop[0])


def _spectrum_lines_from_the_stored_result(data: dict[str, object]) -> None:
    """The spectrum drawn from the JSON as written: a line per kind that has an ok
    response, the failed kind in the legend only, and the whole load's."""
    pytest.importorskip("matplotlib")
    from pytest_netbench._report.plots.load import mix_spectrum_figure

    result = LoadResult.from_dict(data)
    (axes,) = mix_spectrum_figure(result, title="stored").axes
    labels = [str(line.get_label()) for line in axes.get_lines()]
    assert [label.split(" (", 1)[0] for label in labels] == [*KINDS, "all requests"]
    assert labels[1] == "gone (no ok response: 50 errors)"
    assert len(axes.get_lines()[1].get_xdata()) == 0
    assert all(len(line.get_xdata()) > 0 for i, line in enumerate(axes.get_lines()) if i != 1)
