"""Comparison matrices: shape from parameters, medians over trials, best marks, baselines."""

from __future__ import annotations

import math

import pytest
from factories import make_result

from pytest_netbench._compare.records import Record
from pytest_netbench._model import LoadResult
from pytest_netbench._report.markdown import render_matrix_markdown
from pytest_netbench._report.matrix import (
    abbreviate,
    build_matrices,
    cell_text,
    render_all_text,
    render_text,
)


def _result(ok: int, p99: float, *, errors: int = 0, valid: bool = True) -> LoadResult:
    return make_result(
        ok,
        errors={"reset": errors} if errors else None,
        p50_ms=p99 / 2,
        p99_ms=p99,
        valid=valid,
        invalid_reasons=() if valid else ("generator saturated",),
    )


def _rec(
    function: str, params: dict[str, object], ok: int, p99: float, trial: int = 0, **kw: object
) -> Record:
    return Record(
        nodeid=f"t.py::{function}",
        function=function,
        params=params,
        result=_result(ok, p99, **kw),
        trial=trial,
    )  # type: ignore[arg-type]


def test_one_parameter_gives_one_row_per_value_in_order() -> None:
    records = [
        _rec("test_a", {"server": s}, ok, 5.0)
        for s, ok in [("tornado", 3000), ("go", 30000), ("twisted", 1700)]
    ]
    (matrix,) = build_matrices(records)
    assert matrix.row_params == ("server",)
    assert matrix.column_param is None
    assert matrix.rows == (("tornado",), ("go",), ("twisted",))
    assert matrix.cell(("go",), "", "rps").best  # type: ignore[union-attr]
    text = render_text(matrix)
    assert "30.0k*" in text
    assert text.index("tornado") < text.index("go ") < text.index("twisted")
    assert max(len(line) for line in text.splitlines()) <= 80


def test_two_parameters_put_the_smaller_one_across() -> None:
    records = [
        _rec("test_b", {"server": s, "connections": c}, ok=c * i, p99=float(i))
        for i, s in enumerate(["a", "b", "c"], start=1)
        for c in (50, 1000)
    ]
    (matrix,) = build_matrices(records)
    assert matrix.row_params == ("server",)
    assert matrix.column_param == "connections"
    assert matrix.columns == ("50", "1000")
    lines = render_text(matrix).splitlines()
    assert any("connections=50" in line and "connections=1000" in line for line in lines)
    # best marked per column: highest rps and lowest p99 in each connections column
    assert matrix.cell(("c",), "50", "rps").best  # type: ignore[union-attr]
    assert matrix.cell(("a",), "1000", "p99_ms").best  # type: ignore[union-attr]
    assert not matrix.cell(("b",), "50", "rps").best  # type: ignore[union-attr]


def test_column_param_can_be_chosen() -> None:
    records = [_rec("t", {"server": s, "c": c}, 1, 1.0) for s in "xy" for c in (1, 2, 3)]
    (matrix,) = build_matrices(records, column_param="server")
    assert matrix.column_param == "server" and matrix.row_params == ("c",)


def test_three_parameters_fold_extra_ones_into_rows() -> None:
    records = [
        _rec("test_c", {"server": s, "connections": c, "rpc": r}, ok=100, p99=1.0)
        for s in ("gevent", "node", "tornado")
        for c in (10, 100, 1000)
        for r in (1, 10)
    ]
    (matrix,) = build_matrices(records)
    assert matrix.column_param == "rpc"
    assert matrix.row_params == ("server", "connections")
    assert len(matrix.rows) == 9
    text = render_text(matrix)
    header = next(line for line in text.splitlines() if line.startswith("server"))
    assert "connections" in header


def test_trials_aggregate_to_the_median_with_spread() -> None:
    records = [_rec("t", {"s": "x"}, ok, 1.0, trial=i) for i, ok in enumerate((90, 100, 130))]
    records += [_rec("t", {"s": "y"}, 50, 2.0, trial=i) for i in range(3)]
    (matrix,) = build_matrices(records)
    cell = matrix.cell(("x",), "", "rps")
    assert cell is not None
    assert cell.median == 100.0
    assert cell.values == (90.0, 100.0, 130.0)
    assert cell.spread == pytest.approx(0.2)
    assert matrix.trials == 3
    assert "100*±20%" in render_text(matrix)
    assert "median of 3 trials" in render_text(matrix)


def test_baseline_row_value_gives_ratios_within_the_same_column() -> None:
    records = [
        _rec("t", {"server": s, "connections": c}, ok=ok * c, p99=1.0)
        for s, ok in (("tornado", 2), ("go", 10))
        for c in (1, 2)
    ]
    (matrix,) = build_matrices(records, baseline="tornado")
    assert matrix.baseline == "server=tornado"
    go = matrix.cell(("go",), "2", "rps")
    assert go is not None and go.ratio == pytest.approx(5.0)
    assert "5.00x" in render_text(matrix)


def test_baseline_column_value_and_unmatched_baseline() -> None:
    records = [
        _rec("t", {"server": s, "connections": c}, ok=c, p99=1.0)
        for s in ("a", "b")
        for c in (50, 1000)
    ]
    (matrix,) = build_matrices(records, baseline="connections=50")
    assert matrix.baseline == "connections=50"
    assert matrix.cell(("a",), "1000", "rps").ratio == pytest.approx(20.0)  # type: ignore[union-attr]
    (plain,) = build_matrices(records, baseline="nonexistent")
    assert plain.baseline is None
    assert all(c.ratio is None for c in plain.cells.values())


def test_one_matrix_per_function_and_configurable_columns() -> None:
    records = [_rec("t1", {"s": "a"}, 1, 1.0, errors=3), _rec("t2", {"n": 1}, 1, 1.0)]
    records.append(_rec("t1", {"s": "b"}, 2, 2.0))
    matrices = build_matrices(records, metrics=["errors_total", "p50_ms", "server.cpu_s"])
    assert [m.function for m in matrices] == ["t1", "t2"]
    assert matrices[0].metrics == ("errors_total", "p50_ms", "server.cpu_s")
    assert matrices[0].cell(("b",), "", "errors_total").best  # type: ignore[union-attr]
    text = render_all_text(matrices)
    assert "errors_total" in text and "t2" in text


def test_invalid_results_are_flagged_in_cells() -> None:
    records = [_rec("t", {"s": "a"}, 1, 1.0, valid=False), _rec("t", {"s": "b"}, 2, 1.0)]
    (matrix,) = build_matrices(records)
    text = render_text(matrix)
    assert "1!" in text
    assert "! invalid result" in " ".join(text.split())


def test_unparametrised_function_and_labelled_loads() -> None:
    plain = Record(
        nodeid="t.py::test_x", function="t.py::test_x", params={}, result=_result(5, 1.0)
    )
    (matrix,) = build_matrices([plain])
    assert "test_x" in render_text(matrix)
    loads = [
        Record(nodeid="n", function="f", params={"s": "a"}, label=lbl, result=_result(ok, 1.0))
        for lbl, ok in (("get", 1), ("post", 2))
    ]
    (matrix,) = build_matrices(loads)
    assert "load" in (*matrix.row_params, matrix.column_param)


def test_wide_matrices_wrap_into_blocks_within_80_columns() -> None:
    records = [
        _rec("t", {"server": f"server{i}", "connections": c}, ok=123456 + i, p99=12.5)
        for i in range(4)
        for c in (1, 10, 100, 1000, 10000, 20000)
    ]
    text = render_text(build_matrices(records, metrics=["rps", "p99_ms", "errors_total"])[0])
    assert max(len(line) for line in text.splitlines()) <= 80
    matrix = build_matrices(records, metrics=["rps", "p99_ms", "errors_total"])[0]
    assert matrix.column_param == "server"  # 4 servers < 6 connection counts
    assert text.count("server=server0") == 1
    assert text.count("connections ") >= 2  # row labels repeated in each block
    for i in range(4):
        assert f"server=server{i}" in text


def test_abbreviations_are_short() -> None:
    assert abbreviate(12345) == "12.3k"
    assert abbreviate(1234567) == "1.23M"
    assert abbreviate(0) == "0"
    assert abbreviate(0.1234) == "0.123"
    assert abbreviate(999) == "999"
    assert abbreviate(math.nan) == "-"
    assert cell_text(None) == ""


def test_a_figure_that_rounds_up_reads_as_its_rounded_neighbours_do() -> None:
    # 999.6 req/s sat as "1000" in a column of "1.00k"s (the examples' open-loop matrix).
    assert abbreviate(999.6) == abbreviate(1000.4) == "1.00k"
    assert abbreviate(9.996) == "10.0"
    assert abbreviate(99.96) == "100"
    assert abbreviate(0.9996) == "1.00"
    assert abbreviate(99_960) == "100k"
    assert abbreviate(999_999.6) == "1.00M"
    assert abbreviate(-999.6) == "-1.00k"
    assert all(len(abbreviate(v)) <= 6 for v in (999.6, 9.996, 99.96, 999_999.6, 1e12))


def test_markdown_has_a_column_per_value_and_metric_and_bold_best() -> None:
    records = [
        _rec("t", {"server": s, "connections": c}, ok=ok, p99=1.0)
        for s, ok in (("a|b", 10), ("c", 20))
        for c in (1, 2)
    ]
    (matrix,) = build_matrices(records)
    md = render_matrix_markdown(matrix)
    assert "| server | connections=1 rps | connections=1 p99_ms |" in md
    assert "a\\|b" in md  # pipes in values are escaped
    assert "**20**" in md
    assert md.count("\n|") >= 4
