"""PNG plots of matrices (matplotlib is a dev dependency, so these run here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import make_result

from pytest_netbench._errors import NetbenchError
from pytest_netbench._records import Record
from pytest_netbench._report.matrix import build_matrices
from pytest_netbench._report.plot import plot_matrices, plot_matrix

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _record(params: dict[str, object], ok: int, trial: int = 0) -> Record:
    result = make_result(ok, p99_ms=ok / 100)
    return Record(
        nodeid="t.py::f", function="t.py::test_f", params=params, result=result, trial=trial
    )


def test_numeric_column_axis_gives_a_line_plot_and_files_per_metric(tmp_path: Path) -> None:
    records = [
        _record({"server": s, "connections": c}, ok=c + i, trial=t)
        for i, s in enumerate(("a", "b"))
        for c in (10, 100, 1000)
        for t in range(2)
    ]
    written = plot_matrices(build_matrices(records), tmp_path / "plots")
    assert [p.name for p in written] == ["t.py_test_f-rps.png", "t.py_test_f-p99_ms.png"]
    for path in written:
        assert path.read_bytes()[:8] == PNG_MAGIC


def test_categories_and_single_parameter_give_bar_plots(tmp_path: Path) -> None:
    grouped = [_record({"server": s, "keepalive": k}, ok=5) for s in "xyz" for k in ("on", "off")]
    single = [_record({"server": s}, ok=n) for s, n in (("x", 1), ("y", 2))]
    for records in (grouped, single):
        (matrix,) = build_matrices(records)
        path = plot_matrix(matrix, tmp_path / f"{len(records)}.png")
        assert path.read_bytes()[:8] == PNG_MAGIC


def test_unknown_metric_is_refused(tmp_path: Path) -> None:
    (matrix,) = build_matrices([_record({"s": "x"}, ok=1), _record({"s": "y"}, ok=2)])
    with pytest.raises(NetbenchError, match="not in this matrix"):
        plot_matrix(matrix, tmp_path / "x.png", metric="p50_ms")
