"""``window(5s).p99_ms`` as thresholds, SLOs and the gate read it: the shape is checked
before any load, a bad window or figure says how to write one, and which way is worse
follows the figure (a window's rps and ok: lower)."""

from __future__ import annotations

import pytest

from pytest_netbench import SpecError, parse_thresholds
from pytest_netbench._compare.metrics import check_gate_metric, higher_is_better, is_count
from pytest_netbench._experiment.slo import parse_slo
from pytest_netbench._model.windows import parse_window_metric


def test_a_window_metric_in_an_slo_and_a_threshold() -> None:
    slo = parse_slo("window(5s).p99_ms < 50 and window(10).error_rate <= 0.01, p99_ms < 20")
    assert [t.metric for t in slo.terms] == [
        "window(5s).p99_ms",
        "window(10).error_rate",
        "p99_ms",
    ]
    (threshold,) = parse_thresholds("window(5s).p99_ms:10%")
    assert threshold.metric == "window(5s).p99_ms" and threshold.higher_is_worse
    assert check_gate_metric("window(2.5s).rps") == "window(2.5s).rps"
    assert parse_window_metric("window( 2.5 s ).max_ms") == (2.5, "max_ms")


def test_which_way_is_worse_and_which_are_counts() -> None:
    assert higher_is_better("window(5s).rps") and higher_is_better("window(5s).ok")
    assert not higher_is_better("window(5s).p99_ms")
    assert is_count("window(5s).errors_total") and not is_count("window(5s).p99_ms")
    (limit,) = parse_thresholds("window(5s).errors_total:0")
    assert not limit.relative


@pytest.mark.parametrize(
    "text", ["window(5s).p99 < 50", "window(0s).p99_ms < 50", "window(5m).p99_ms < 5"]
)
def test_a_window_metric_that_cannot_be_read(text: str) -> None:
    with pytest.raises(SpecError, match=r"write a window's figure as window\(5s\)\.p99_ms"):
        parse_slo(text)


def test_a_window_that_fits_no_whole_rows_is_refused_before_the_load() -> None:
    from pytest_netbench._model.windows import check_window_metrics

    check_window_metrics(["p99_ms", "window(2s).p99_ms", "window(0.5s).rps"], 0.5)
    with pytest.raises(SpecError, match=r"a window of 0\.3 s is no whole number of timeline rows"):
        check_window_metrics(["window(0.3s).p99_ms"], 1.0)
