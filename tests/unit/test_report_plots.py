"""The pictures, drawn from a saved session (matplotlib is a dev dependency, so these run).

``data/plot_session.json`` was written by ``--netbench-json`` after real loopback runs: a
matrix of catalog servers (tornado, gevent, asyncio_uvloop at 10 and 100 connections, two
trials; one cell invalid, the generator saturated), an open-loop load at 1,500 req/s, two
sweeps of the paced server (capacities 600 and 1000 req/s, rates 200..1400, the 600 one
timing out past saturation) and a cold start of the warming server (300 req/s for its
first second, then 1,500), and a capacity search of a 700 req/s paced server against
p99_ms < 50. Discarded runs and the experiments' histograms were trimmed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import make_result

pytest.importorskip("matplotlib")

from matplotlib.axes import Axes

from pytest_netbench._compare.records import Record, Session, session_from_dict
from pytest_netbench._errors import NetbenchError
from pytest_netbench._experiment.capacity import CapacityResult
from pytest_netbench._experiment.cold_start import ColdStartResult
from pytest_netbench._experiment.sweep import SweepResult, answered_rate
from pytest_netbench._model import TimelineRow
from pytest_netbench._report.matrix import build_matrices
from pytest_netbench._report.plots.canvas import (
    DPI,
    PlotUnavailable,
    legend_columns,
    new_figure,
    save,
)
from pytest_netbench._report.plots.capacity import capacity_figure
from pytest_netbench._report.plots.cold_start import cold_start_figure
from pytest_netbench._report.plots.load import (
    percentile_label,
    spectrum,
    spectrum_figure,
    timeline_figure,
    timeline_series,
)
from pytest_netbench._report.plots.matrix import bar_series, matrix_figure
from pytest_netbench._report.plots.naming import (
    UniqueNames,
    function_stem,
    record_stem,
)
from pytest_netbench._report.plots.session import plot_session
from pytest_netbench._report.plots.sweep import sweep_figure
from pytest_netbench._stats.histogram import encode_histogram, new_histogram

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SAVED = Path(__file__).with_name("data") / "plot_session.json"


@pytest.fixture(scope="module")
def saved() -> Session:
    data: dict[str, Any] = json.loads(SAVED.read_text())
    return session_from_dict(data)


def _loads(saved: Session, name: str) -> list[Record]:
    return [r for r in saved.records if r.function.endswith(f"::{name}")]


def _labelled(axes: Axes) -> None:
    """Both axes say what they show, with a unit in brackets (or percent ticks)."""
    assert axes.get_xlabel() and axes.get_ylabel()
    assert "(" in axes.get_ylabel(), axes.get_ylabel()


# -- the whole session ---------------------------------------------------------------------
def test_a_saved_session_draws_every_kind_of_picture(saved: Session, tmp_path: Path) -> None:
    # Every naming rule with the fewest loads (each picture costs ~0.5 s to lay out): one
    # load tried twice, one tried once, the invalid cell, the open-loop load; the matrix
    # pictures still come from the whole matrix.
    kept = {
        "test_data.py::test_matrix[10-tornado]",
        "test_data.py::test_matrix[10-asyncio_uvloop]",
        "test_data.py::test_matrix[100-asyncio_uvloop]",
        "test_data.py::test_open",
    }
    records = [r for r in saved.records if r.nodeid in kept]
    assert any(not r.result.valid for r in records)
    written = plot_session(
        tmp_path / "plots",
        records=records,
        experiments=saved.experiments,
        matrices=build_matrices(saved.records),
    )
    names = [p.name for p in written]
    assert len(names) == len(set(names))
    assert all(p.read_bytes()[:8] == PNG_MAGIC for p in written)
    assert {
        # a load tried twice: a picture per trial; tried once: no trial in the name
        "test_data.test_matrix-connections=10-server=tornado-trial1-latency.png",
        "test_data.test_matrix-connections=10-server=tornado-trial2-timeline.png",
        "test_data.test_matrix-connections=10-server=asyncio_uvloop-latency.png",
        "test_data.test_matrix-connections=100-server=asyncio_uvloop-timeline.png",
        "test_data.test_open-latency.png",
        "test_data.test_open-timeline.png",
        # the test's parametrisations on one spectrum
        "test_data.test_matrix-latency.png",
        "test_data.test_sweep-sweep.png",
        "test_data.test_warming-cold_start.png",
        "test_data.test_capacity-served=700-capacity.png",
        "test_data.test_matrix-matrix-rps.png",
        "test_data.test_matrix-matrix-p99_ms.png",
    } <= set(names)
    # 5 loads x (spectrum + timeline), 1 combined spectrum, 1 sweep, 1 cold start,
    # 1 capacity search, and 2 metrics x 2 matrices
    assert len(names) == 10 + 1 + 1 + 1 + 1 + 4


# -- loads -----------------------------------------------------------------------------------
def test_spectrum_runs_from_the_lowest_to_the_highest_latency(saved: Session) -> None:
    result = _loads(saved, "test_open")[0].result
    points = spectrum(result)
    assert points.count == result.latency.count
    assert points.x[0] == 1.0
    # as far as the count supports: N responses reach 1 - 1/N, at most 99.999 %
    assert points.x[-1] == pytest.approx(min(points.count, 1e5))
    assert list(points.ms) == sorted(points.ms)
    assert points.ms[-1] == pytest.approx(result.max_ms, rel=1e-3)
    assert points.ms[0] <= result.p50_ms <= points.ms[-1]


def test_spectrum_of_a_result_without_histogram_is_empty() -> None:
    assert spectrum(make_result(10)).x == ()


@pytest.mark.parametrize(
    ("x", "text"),
    [(1, "0%"), (10, "90%"), (100, "99%"), (1000, "99.9%"), (1e5, "99.999%")],
)
def test_percentile_ticks_read_as_nines(x: float, text: str) -> None:
    assert percentile_label(x) == text


def test_spectrum_picture_is_on_a_log_percentile_axis(saved: Session) -> None:
    one = [("", _loads(saved, "test_open")[0].result)]
    (axes,) = spectrum_figure(one, title="t").axes
    assert axes.get_xscale() == "log"
    assert [t.get_text() for t in axes.get_xticklabels()][:3] == ["0%", "90%", "99%"]
    assert axes.get_ylim()[0] == 0
    assert axes.get_legend() is None
    _labelled(axes)
    several = [(r.nodeid, r.result) for r in _loads(saved, "test_matrix")[:3]]
    (axes,) = spectrum_figure(several, title="t").axes
    assert len(axes.get_legend().get_texts()) == 3


def test_a_drain_row_that_begins_just_before_the_deadline_is_left_out() -> None:
    # The window ran 0.3 ms past 3 s; the row from 3 s on holds the drain's 610 answers,
    # which over 0.3 ms would read as two million a second.
    rows = tuple(TimelineRow(i, ok, 0, 5.0, 1.0) for i, ok in enumerate((988, 999, 1002, 610)))
    result = dataclasses.replace(make_result(2989, duration_s=3.0003), timeline=rows)
    assert timeline_series(result).ok_per_s == (988.0, 999.0, 1002.0)


def test_timeline_keeps_the_measured_window_and_rates_a_short_last_row() -> None:
    rows = (
        TimelineRow(0, 100, 0, 2.0, 1.0),
        TimelineRow(1, 100, 4, 3.0, 1.0),
        TimelineRow(2, 25, 0, 2.5, 1.0),  # the window ends at 2.25 s: a quarter row
        TimelineRow(3, 7, 0, 90.0, 9.0),  # an open loop's drain, after the window
    )
    result = dataclasses.replace(make_result(225, duration_s=2.25), timeline=rows)
    series = timeline_series(result)
    assert series.start_s == (0.0, 1.0, 2.0)
    assert series.middle_s == (0.5, 1.5, 2.125)  # the middle of the time each covered
    assert series.ok_per_s == (100.0, 100.0, 100.0)
    assert series.errors_per_s == (0.0, 4.0, 0.0)
    figure = timeline_figure(result, title="t")
    latency_axes = figure.axes[2]
    for axes in figure.axes:
        assert axes.get_ylim()[0] == 0
        assert axes.get_ylabel()
    _labelled(latency_axes)
    assert len(latency_axes.get_legend().get_texts()) == 2  # p99 and p50


def test_a_timeline_of_one_row_says_it_is_too_short_and_what_gives_more() -> None:
    one_row = dataclasses.replace(
        make_result(1000, duration_s=1.0), timeline=(TimelineRow(0, 1000, 0, 2.0, 1.0),)
    )
    rate_axes = timeline_figure(one_row, title="t").axes[0]
    (note,) = [t.get_text() for t in rate_axes.texts]
    assert note.startswith("1 row of 1 s: too short a load for a timeline")
    assert "timeline_resolution=" in note
    three_rows = dataclasses.replace(
        make_result(3000, duration_s=3.0),
        timeline=tuple(TimelineRow(i, 1000, 0, 2.0, 1.0) for i in range(3)),
    )
    assert not timeline_figure(three_rows, title="t").axes[0].texts


def test_a_legend_of_long_names_gets_as_many_columns_as_fit_the_figure() -> None:
    long = [f"test_sweep_1k[impl=WsgiRef-PyPy, per_connection={i}]" for i in range(11)]
    assert legend_columns(long, 15) == 3  # 6 of these ran past both edges of the figure
    assert legend_columns(["a", "b"], 15) == 2
    assert legend_columns([f"s{i}" for i in range(20)], 15) == 6
    assert legend_columns(["x" * 400], 8) == 1
    assert legend_columns([], 8) == 1


def test_a_saved_picture_holds_its_whole_legend(tmp_path: Path) -> None:
    from matplotlib.image import imread

    figure = new_figure(4, 3)
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], label="a line")
    figure.legend(["a label far wider than the four-inch figure it is drawn under"],
                  loc="outside lower center")  # fmt: skip
    width = imread(save(figure, tmp_path / "wide.png")).shape[1]
    assert width > 4 * DPI  # the image grew to the legend instead of cutting it off


# -- experiments -------------------------------------------------------------------------------
def test_sweep_picture_has_the_three_graphs_and_a_line_per_sweep(saved: Session) -> None:
    sweeps = [
        (f"served={r.params['served']}", SweepResult.from_dict(r.data))
        for r in saved.experiments
        if r.kind == "sweep"
    ]
    figure = sweep_figure(sweeps, title="t")
    achieved, latency, errors = figure.axes
    for axes in figure.axes:
        _labelled(axes)
        assert "demanded" in axes.get_xlabel()
    assert achieved.get_ylim()[0] == 0 and errors.get_ylim()[0] == 0
    # latency climbs by decades past saturation: a log axis
    assert latency.get_yscale() == "log"
    (legend,) = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["served=600", "served=1000"]
    # the 600 req/s server timed out past saturation: its errors show
    assert max(max(line.get_ydata()) for line in errors.get_lines()) > 0


def test_sweeps_of_several_tests_also_share_one_picture(saved: Session, tmp_path: Path) -> None:
    first, second = (r for r in saved.experiments if r.kind == "sweep")
    other = dataclasses.replace(second, function="t.py::test_other", params={"server": "b"})
    written = plot_session(tmp_path, experiments=[first, other])
    assert [p.name for p in written] == [
        "test_data.test_sweep-sweep.png",
        "t.test_other-sweep.png",
        "all-sweep.png",
    ]


def test_sweep_ok_rate_counts_the_window_not_the_drain(saved: Session) -> None:
    (record,) = [r for r in saved.experiments if r.kind == "sweep" and r.params["served"] == "600"]
    step = SweepResult.from_dict(record.data).steps[3]  # 800 req/s at a 600 req/s server
    assert step.rate == 800
    # rps counts the answers of the drain too and reads as if the server kept up; inside the
    # window it answered at its capacity, below what was sent
    assert answered_rate(step.result) < 0.9 * step.achieved_rate <= step.result.rps
    assert answered_rate(make_result(50, duration_s=2.0)) == 25.0  # no timeline: rps


def test_cold_start_picture_marks_the_steady_rate_and_the_settle_time(saved: Session) -> None:
    (record,) = [r for r in saved.experiments if r.kind == "cold_start"]
    result = ColdStartResult.from_dict(record.data)
    figure = cold_start_figure(result, title="t")
    rate_axes, latency_axes = figure.axes
    texts = [t.get_text() for t in rate_axes.get_legend().get_texts()]
    assert any(t.startswith("steady rate") for t in texts)
    assert f"settled at {result.settle_s:g} s" in texts
    assert rate_axes.get_ylim()[0] == 0
    _labelled(latency_axes)
    assert latency_axes.get_xlim() == (0.0, result.duration_s)


def test_capacity_picture_has_a_panel_per_slo_term(saved: Session) -> None:
    (record,) = [r for r in saved.experiments if r.kind == "capacity"]
    search = CapacityResult.from_dict(record.data)
    figure = capacity_figure(search, title="t")
    latency, errors = figure.axes
    for axes, bound in ((latency, "p99_ms < 50"), (errors, "error_rate <= 0.001")):
        _labelled(axes)
        assert axes.get_ylim()[0] == 0
        texts = [t.get_text() for t in axes.get_legend().get_texts()]
        assert texts[:2] == [f"bound: {bound}", "capacity 714 req/s"]
    # one point per step on each panel, numbered in the order they ran
    assert [t.get_text() for t in latency.texts] == [str(n) for n in range(1, 8)]


# -- matrices ----------------------------------------------------------------------------------
def test_matrix_bars_start_at_zero_with_the_trial_range_as_error_bars(saved: Session) -> None:
    (matrix,) = build_matrices(_loads(saved, "test_matrix"))
    _, below, above, invalid = bar_series(matrix, "rps", "10")
    assert all(b >= 0 and a >= 0 for b, a in zip(below, above, strict=True))
    assert any(b > 0 for b in below)  # two trials differ
    assert not any(invalid)
    assert any(bar_series(matrix, "rps", "100")[3])  # the saturated generator's cell
    (axes,) = matrix_figure(matrix, "rps").axes
    assert axes.get_ylim()[0] == 0
    assert axes.containers and any(type(c).__name__ == "ErrorbarContainer" for c in axes.containers)
    texts = [t.get_text() for t in axes.get_legend().get_texts()]
    assert texts == ["connections=10", "connections=100", "invalid result"]
    # A series' swatch is its colour alone, though one of its bars is hatched (invalid).
    swatches = axes.get_legend().legend_handles
    assert [bool(h.get_hatch()) for h in swatches] == [False, False, True]
    assert "ok responses/s" in axes.get_ylabel()


def test_a_one_trial_matrix_has_no_error_bars_and_still_starts_at_zero() -> None:
    records = [
        Record("t.py::f", "t.py::test_f", {"server": s}, make_result(ok, p99_ms=ok / 10))
        for s, ok in (("x", 900), ("y", 1000))
    ]
    (matrix,) = build_matrices(records)
    (axes,) = matrix_figure(matrix, "p99_ms").axes
    assert axes.get_ylim()[0] == 0
    assert not any(type(c).__name__ == "ErrorbarContainer" for c in axes.containers)
    assert axes.get_ylabel().startswith("p99_ms (ms)")


def test_unknown_metric_is_refused() -> None:
    records = [Record("t.py::f", "t.py::test_f", {"s": "x"}, make_result(1))]
    (matrix,) = build_matrices(records)
    with pytest.raises(NetbenchError, match="not in this matrix"):
        matrix_figure(matrix, "p50_ms")


# -- names and the missing extra ---------------------------------------------------------------
def test_file_names_say_test_parameters_and_trial() -> None:
    assert function_stem("tests/test_x.py::TestA::test_f") == "test_x.TestA.test_f"
    # A command's records are named after it: its pictures still have a stem of their own.
    assert function_stem("netbench http http://127.0.0.1:8080/") == (
        "netbench_http_http_127.0.0.1_8080"
    )
    stem = record_stem("t.py::test_f", {"server": "go/1 2", "load": "get"}, trial=1)
    assert stem == "t.test_f-server=go_1_2-load=get-trial2"
    names = UniqueNames()
    assert names.claim("a", "latency") == "a-latency.png"
    assert names.claim("a", "latency") == "a-latency-2.png"
    assert names.claim("a", "matrix-server.cpu_s") == "a-matrix-server.cpu_s.png"


def test_missing_matplotlib_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes that import fail, as if it were not installed.
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(PlotUnavailable, match=r"pip install 'pytest-netbench\[plot\]'"):
        new_figure(4, 3)


def _texts(axes: Axes) -> list[str]:
    return [t.get_text() for t in axes.texts]


def test_a_load_without_ok_responses_says_so_rather_than_drawing_nothing() -> None:
    errors_only = dataclasses.replace(
        make_result(0, errors={"connect": 13}, duration_s=2.0),
        timeline=(TimelineRow(0, 0, 10, math.nan), TimelineRow(1, 0, 3, math.nan)),
        latency_histogram=encode_histogram(new_histogram()),
    )
    (axes,) = spectrum_figure([("", errors_only)], title="t").axes
    assert "no ok responses" in _texts(axes)
    rate_axes, error_axes, latency_axes = timeline_figure(errors_only, title="t").axes
    assert _texts(error_axes) == []  # errors there were: no "no errors"
    assert all(axes.get_ylim()[0] == 0 for axes in (rate_axes, error_axes, latency_axes))
    cut_at_once = dataclasses.replace(errors_only, duration_s=0.0)
    rate_axes, error_axes, _ = timeline_figure(cut_at_once, title="t").axes
    assert _texts(rate_axes) == ["no row in the measured window"]
    assert _texts(error_axes) == []
