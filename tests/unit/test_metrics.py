"""What metrics mean: names checked against the result, nested figures, directions."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from factories import make_result

from pytest_netbench._compare.metrics import (
    DEFAULT_METRICS,
    UnknownRequestError,
    check_gate_metric,
    check_metrics,
    higher_is_better,
    is_count,
    metric_value,
    own_metric,
    split_request_metric,
)
from pytest_netbench._compare.thresholds import parse_thresholds
from pytest_netbench._errors import SpecError
from pytest_netbench._experiment.slo import check_slo_requests, parse_slo
from pytest_netbench._model import LatencySummary, LoadResult, RequestStats, ServerStats


def test_unknown_metric_names_are_refused_clearly() -> None:
    with pytest.raises(SpecError, match=r"unknown metric 'p99'.*p99_ms"):
        check_metrics(["rps", "p99"])
    with pytest.raises(SpecError, match="not a number"):
        check_metrics(["url"])
    with pytest.raises(SpecError, match="no metrics"):
        check_metrics([" "])


def test_metric_value_reaches_nested_figures() -> None:
    result = make_result(10, errors={"reset": 4})
    assert metric_value(result, "errors.reset") == 4.0
    assert metric_value(result, "errors.verify") == 0.0
    assert math.isnan(metric_value(result, "server.cpu_s"))
    with_server = replace(result, server=ServerStats(pid=1, cpu_user_s=1.0, cpu_system_s=0.5))
    assert metric_value(with_server, "server.cpu_s") == 1.5


def test_throughput_is_better_higher_and_latency_errors_cpu_lower() -> None:
    assert higher_is_better("rps") and higher_is_better("generator.achieved_rate")
    for metric in ("p99_ms", "errors_total", "server.cpu_s", "server.peak_rss_bytes"):
        assert not higher_is_better(metric)
    assert check_metrics(DEFAULT_METRICS) == DEFAULT_METRICS


# -- mapping paths are strict; per-request figures (issue 18) ------------------------------------
def _with_requests(result: LoadResult, **kinds: int) -> LoadResult:
    """``result`` as if its load had sent a mix with these kinds (name -> ok count)."""
    stats = {
        name: RequestStats(
            name=name,
            method="GET",
            path=f"/{name}",
            duration_s=result.duration_s,
            sent=ok + 1,
            ok=ok,
            errors={"reset": 1},
            in_flight=0,
            status_codes={200: ok, 404: 2},
            latency=LatencySummary(count=ok, p50_ms=1.5, p99_ms=7.0, p999_ms=9.5, mean_ms=2.0),
        )
        for name, ok in kinds.items()
    }
    return replace(result, by_request=stats)


def test_a_mistyped_error_kind_is_refused_naming_the_kinds() -> None:
    result = make_result(10, errors={"reset": 4})
    with pytest.raises(SpecError, match=r"unknown error kind 'rset'.*connect, reset, timeout"):
        metric_value(result, "errors.rset")
    with pytest.raises(SpecError, match=r"unknown error kind 'rset'.*connect, reset"):
        check_metrics(["errors.rset"])


def test_status_codes_are_read_by_their_number() -> None:
    result = replace(make_result(10), status_codes={200: 8, 404: 2})
    assert metric_value(result, "status_codes.404") == 2.0
    assert metric_value(result, "status_codes.500") == 0.0  # a code not seen: none of it
    assert check_metrics(["status_codes.404"]) == ("status_codes.404",)
    with pytest.raises(SpecError, match=r"status code 'nf' is not a number.*status_codes.404"):
        check_metrics(["status_codes.nf"])


def test_per_request_figures_are_metrics_like_the_loads_own() -> None:
    result = _with_requests(make_result(10), search=20, list=30)
    search = result.by_request["search"]
    for figure in ("ok", "sent", "errors_total", "rps", "p50_ms", "p99_ms", "p999_ms", "mean_ms"):
        assert metric_value(result, f"by_request.search.{figure}") == getattr(search, figure)
    assert metric_value(result, "by_request.search.p999_ms") == 9.5
    assert metric_value(result, "by_request.list.ok") == 30.0
    assert metric_value(result, "by_request.list.errors.reset") == 1.0
    assert metric_value(result, "by_request.list.errors.timeout") == 0.0
    assert metric_value(result, "by_request.list.status_codes.404") == 2.0
    # Direction and units go by the last part, as for the load's own figures.
    assert higher_is_better("by_request.search.rps") and higher_is_better("by_request.x.ok")
    assert not higher_is_better("by_request.search.p99_ms")
    # More 200s is better, more 503s worse: a status code goes by its class.
    assert higher_is_better("status_codes.200") and higher_is_better(
        "by_request.s.status_codes.204"
    )
    assert not higher_is_better("status_codes.503") and not higher_is_better("status_codes.404")
    assert is_count("by_request.search.errors_total") and not is_count("by_request.s.p99_ms")


def test_a_request_the_load_did_not_send_is_an_error_naming_the_ones_it_did() -> None:
    result = _with_requests(make_result(10), search=20, list=30)
    with pytest.raises(UnknownRequestError, match=r"no request named 'serch'.*search, list"):
        metric_value(result, "by_request.serch.p99_ms")
    with pytest.raises(UnknownRequestError, match=r"no request named 'list'.*none"):
        metric_value(make_result(10), "by_request.list.p99_ms")


def test_per_request_names_are_checked_for_shape_and_against_known_requests() -> None:
    assert check_metrics(["by_request.search.p99_ms"]) == ("by_request.search.p99_ms",)
    assert check_gate_metric("by_request.search.p99_ms") == "by_request.search.p99_ms"
    assert check_metrics(["by_request.search.p999_ms"]) == ("by_request.search.p999_ms",)
    with pytest.raises(SpecError, match=r"'p99' is no figure of a request kind.*p999_ms"):
        check_metrics(["by_request.search.p99"])
    with pytest.raises(SpecError, match=r"name a request kind and one of its figures"):
        check_metrics(["by_request.search"])
    with pytest.raises(SpecError, match=r"'by_request.search.latency' is not a number"):
        check_metrics(["by_request.search.latency"])
    with pytest.raises(SpecError, match=r"unknown error kind 'rset'"):
        check_metrics(["by_request.search.errors.rset"])
    with pytest.raises(UnknownRequestError, match=r"no request named 'serch'.*list, search"):
        check_metrics(["by_request.serch.p99_ms"], requests=["list", "search"])


def test_per_request_gate_limits_take_the_units_of_their_last_part() -> None:
    (limit,) = parse_thresholds("by_request.search.p99_ms:2ms")
    assert (limit.metric, limit.limit, limit.relative) == ("by_request.search.p99_ms", 2.0, False)
    assert parse_thresholds("by_request.search.errors_total:0")[0].limit == 0
    with pytest.raises(SpecError, match=r"a limit needs its unit.*by_request.search.p99_ms:5ms"):
        parse_thresholds("by_request.search.p99_ms:5")
    with pytest.raises(SpecError, match=r"unknown metric 'by_request.search.p99'"):
        parse_thresholds("by_request.search.p99:5%")


def test_per_request_slo_terms_are_checked_against_the_specs_names() -> None:
    slo = parse_slo("by_request.search.p99_ms < 80 and p99_ms < 100")
    result = _with_requests(make_result(10), search=20)
    assert slo.evaluate(result).checks[0].value == 7.0
    check_slo_requests(slo, ["search", "list"])
    with pytest.raises(SpecError, match=r"SLO term 'by_request.search.p99_ms < 80'.*list, item"):
        check_slo_requests(slo, ["list", "item"])


def test_a_request_named_by_its_target_is_a_metric_name_whole() -> None:
    """A mix's default names ("GET /items.json", "GET /search?q=x") hold spaces, slashes,
    dots and '=': the name is one part of by_request.NAME.METRIC, taken whole."""
    result = _with_requests(make_result(10), **{"GET /items": 20, "GET /items.json": 30})
    assert metric_value(result, "by_request.GET /items.json.ok") == 30.0
    assert metric_value(result, "by_request.GET /items.ok") == 20.0
    assert metric_value(result, "by_request.GET /items.json.errors.reset") == 1.0
    assert metric_value(result, "by_request.GET /items.json.status_codes.404") == 2.0
    assert check_metrics(["by_request.GET /items.json.p999_ms"], requests=["GET /items.json"])
    # Without the names (a flag's shape, checked before any load): the figure is the end.
    assert split_request_metric("by_request.GET /items.json.p99_ms") == (
        "GET /items.json",
        "p99_ms",
    )
    assert split_request_metric("by_request.s.errors.reset") == ("s", "errors.reset")
    assert split_request_metric("by_request.s.latency.p99_ms") == ("s", "latency.p99_ms")
    assert split_request_metric("by_request.x.errors.p99_ms") == ("x.errors", "p99_ms")
    assert split_request_metric("by_request.search") is None
    assert split_request_metric("p99_ms") is None
    assert own_metric("by_request.GET /a.b.rps") == "rps" and higher_is_better("by_request.a.b.rps")

    slo = parse_slo("by_request.GET /search?q=x.p99_ms < 50 and p99_ms <= 10")
    assert [t.metric for t in slo.terms] == ["by_request.GET /search?q=x.p99_ms", "p99_ms"]
    (limit,) = parse_thresholds("by_request.GET /items.json.p99_ms:10%")
    assert limit.metric == "by_request.GET /items.json.p99_ms" and limit.relative
