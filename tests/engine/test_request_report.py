"""A real mix on loopback, rendered per request kind (issue 18, "every endpoint on its own"):
the JSON's per-request figures add up to the load's, the text report has a row per kind
and the load's own, and the spectrum has a line per kind plus the whole load's."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from servers import StartHttp

from pytest_netbench import LoadResult, http_load, metric_value, parse_slo
from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._model import ERROR_KINDS, Request
from pytest_netbench._report.requests import request_lines
from pytest_netbench._report.summary import format_result
from pytest_netbench.cli import main

MIX = [
    Request("GET", "/items", name="list"),
    Request("GET", "/items/7", name="item"),
    Request("POST", "/orders", body=b'{"qty": 2}', name="order"),
]
LATENCY_KEYS = ("p50_ms", "p75_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms")


@pytest.fixture
def mixed(http_server: StartHttp, consistent: Callable[..., LoadResult]) -> LoadResult:
    # Every 4th request across both connections is a 503: status errors land in every kind.
    server, app = http_server(status_every=4)
    result = consistent(http_load(server.url, mix=MIX, requests=300, connections=2))
    assert app.seen.requests == 300
    return result


def test_the_json_holds_each_kinds_figures_and_they_add_up_to_the_loads(
    mixed: LoadResult,
) -> None:
    data = mixed.to_dict()
    kinds = data["by_request"]
    assert list(kinds) == ["list", "item", "order"]
    for name, kind in kinds.items():
        assert kind["sent"] == kind["ok"] + kind["errors_total"] + kind["in_flight"], name
        assert kind["sent"] == 100
        assert kind["errors_total"] == sum(kind["errors"].values())
        # Flat latency keys as at the top of the load's JSON, the same as in "latency".
        for key in LATENCY_KEYS:
            assert kind[key] == kind["latency"][key], (name, key)
        assert kind["p999_ms"] is not None and kind["p99_ms"] <= kind["p999_ms"] <= kind["max_ms"]
    for figure in ("sent", "ok", "errors_total", "in_flight"):
        assert sum(kind[figure] for kind in kinds.values()) == data[figure], figure
    for error in ERROR_KINDS:
        assert sum(kind["errors"][error] for kind in kinds.values()) == data["errors"][error]
    codes = sum((Counter(kind["status_codes"]) for kind in kinds.values()), Counter())
    assert codes == Counter(data["status_codes"])
    assert data["errors"]["status"] == 75 and data["status_codes"]["503"] == 75

    # Read back (a stored baseline), a kind's p99.9 is still there.
    again = LoadResult.from_dict(data)
    assert again.by_request["order"].p999_ms == mixed.by_request["order"].p999_ms


def test_the_text_report_has_a_row_per_kind_and_the_loads_own(mixed: LoadResult) -> None:
    text = format_result(mixed)
    assert "Per request (latency in ms of each kind's ok responses)" in text
    lines = request_lines(mixed, 80)
    heading, *rows = lines[:5]
    assert heading.split() == [
        "request", "sent", "ok", "errors", "req/s", "p50", "p90", "p99", "p99.9", "max",
    ]  # fmt: skip
    assert [row.split()[0] for row in rows] == ["list", "item", "order", "all"]
    for row, name in zip(rows, ["list", "item", "order"], strict=False):
        kind = mixed.by_request[name]
        assert row.split()[1:4] == [f"{kind.sent:,}", f"{kind.ok:,}", f"{kind.errors_total:,}"]
    assert rows[3].split()[1:4] == [f"{mixed.sent:,}", f"{mixed.ok:,}", f"{mixed.errors_total:,}"]
    assert all(len(line) <= 80 for line in lines)
    assert "order (POST /orders): status 200:" in text and "errors status" in text


def test_the_spectrum_has_a_line_per_kind_and_one_for_the_whole_load(mixed: LoadResult) -> None:
    pytest.importorskip("matplotlib")
    from pytest_netbench._report.plots.load import mix_spectrum_figure

    figure = mix_spectrum_figure(mixed, title="mix")
    (axes,) = figure.axes
    labels = [line.get_label() for line in axes.get_lines()]
    assert [label.split(" ", 1)[0] for label in labels] == ["list", "item", "order", "all"]
    for line, name in zip(axes.get_lines(), ["list", "item", "order"], strict=False):
        kind = mixed.by_request[name]
        assert f"({kind.ok:,} ok" in str(line.get_label())
        # Each line ends at its kind's own highest latency, the whole load's at the load's.
        assert math.isclose(float(line.get_ydata()[-1]), kind.max_ms, rel_tol=1e-3)
    whole = axes.get_lines()[-1]
    assert math.isclose(float(whole.get_ydata()[-1]), mixed.max_ms, rel_tol=1e-3)
    assert whole.get_linestyle() == "--"
    assert [t.get_text() for t in axes.get_legend().get_texts()] == labels


def test_a_kind_named_by_its_target_is_addressed_whole_in_slos_and_thresholds(
    http_server: StartHttp,
    consistent: Callable[..., LoadResult],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Default names ("GET /items.json", "GET /search?q=x") hold a space, dots and '=':
    an SLO term, a metric and the command line's --threshold read them whole."""
    server, _ = http_server()
    mix = [Request("GET", "/items.json"), Request("GET", "/search?q=x")]
    result = consistent(http_load(server.url, mix=mix, requests=100, connections=2))
    assert list(result.by_request) == ["GET /items.json", "GET /search?q=x"]
    assert metric_value(result, "by_request.GET /items.json.ok") == 50
    verdict = parse_slo(
        "by_request.GET /items.json.ok == 50 and by_request.GET /search?q=x.errors_total == 0"
    ).evaluate(result)
    assert verdict.passed, verdict.describe()

    targets = tmp_path / "targets.txt"
    targets.write_text(f"GET {server.url}/items.json\n\nGET {server.url}/search?q=x\n")
    term = "by_request.GET /items.json.ok == 50"
    code = main(
        ["http", server.url, "--mix", str(targets), "-n", "100", "-c", "2", "--threshold", term]
    )
    out = capsys.readouterr().out
    assert code == ExitCode.OK, out
    assert f"ok      {term}  by_request.GET /items.json.ok = 50" in out
