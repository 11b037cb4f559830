"""What metrics mean: names checked against the result, nested figures, directions."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from factories import make_result

from pytest_netbench._errors import SpecError
from pytest_netbench._metrics import DEFAULT_METRICS, check_metrics, higher_is_better, metric_value
from pytest_netbench._model import ServerStats


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
