"""Per-request metric names on a real load (issue 18): ``by_request.NAME.METRIC`` reads a
mix's figures for one request kind, SLO terms check them, and a name the spec does not
send is refused before any socket."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from servers import StartHttp

from pytest_netbench import LoadResult, capacity, http_load, metric_value
from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._compare.metrics import UnknownRequestError
from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.slo import parse_slo
from pytest_netbench._model import Request
from pytest_netbench.cli import main

MIX = [Request("GET", "/list", name="list"), Request("GET", "/item?id=7", name="item")]


def test_per_request_metrics_read_the_figures_of_that_request_kind(
    http_server: StartHttp, consistent: Callable[..., LoadResult]
) -> None:
    server, _ = http_server()
    result = consistent(http_load(server.url, mix=MIX, requests=200, connections=2))

    listed = result.by_request["list"]
    assert metric_value(result, "by_request.list.p99_ms") == listed.p99_ms
    for figure in ("ok", "sent", "errors_total", "rps", "p50_ms", "max_ms", "mean_ms"):
        assert metric_value(result, f"by_request.list.{figure}") == getattr(listed, figure)
    assert metric_value(result, "by_request.item.ok") == result.by_request["item"].ok == 100
    assert metric_value(result, "by_request.item.status_codes.200") == 100
    assert metric_value(result, "by_request.item.errors.reset") == 0
    with pytest.raises(UnknownRequestError, match=r"no request named 'items'.*list, item"):
        metric_value(result, "by_request.items.ok")

    # An SLO term on one request kind reads that kind's figure.
    verdict = parse_slo("by_request.item.ok == 100 and by_request.list.errors_total == 0").evaluate(
        result
    )
    assert verdict.passed, verdict.describe()
    failed = parse_slo("by_request.list.ok > 100").evaluate(result)
    assert not failed.passed
    assert failed.describe() == "by_request.list.ok = 100 (needs > 100): FAILED"


def test_a_capacity_slo_on_a_request_the_mix_lacks_is_refused_before_any_socket(
    http_server: StartHttp,
) -> None:
    server, app = http_server()
    with pytest.raises(SpecError, match=r"no request named 'serch'; its requests: list, item"):
        capacity(server.url, slo="by_request.serch.p99_ms < 80", mix=MIX, duration=0.5)
    assert app.seen.connections == 0


def test_a_cli_threshold_on_a_request_is_refused_before_any_load(
    http_server: StartHttp, capsys: pytest.CaptureFixture[str]
) -> None:
    server, app = http_server()
    with pytest.raises(SystemExit) as stopped:
        main(["http", server.url, "-n", "50", "--threshold", "by_request.list.p99_ms<80"])
    assert stopped.value.code == ExitCode.USAGE
    # The command line sends no mix: no request name is one it sends.
    assert "no request named 'list'; its requests: none" in capsys.readouterr().err
    assert app.seen.connections == 0
