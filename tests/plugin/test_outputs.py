"""End-to-end: matrices for 1, 2 and 3 parameters, the JSON and Markdown files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _matrix_test(params: dict[str, list[object]]) -> str:
    decorators = "\n".join(f"@pytest.mark.parametrize({k!r}, {v!r})" for k, v in params.items())
    args = ", ".join(params)
    return f"""
import pytest

{decorators}
def test_grid(netbench, hello, {args}):
    srv = hello()
    netbench.http(srv.url, requests=100, connections=2)
"""


def test_matrix_for_one_parameter(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(_matrix_test({"connections": [1, 2]}))
    result = pytester.runpytest_subprocess("--netbench", "--netbench-baseline", "1")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*= netbench =*",
            "*test_matrix_for_one_parameter.py::test_grid*(ratio to connections=1)*",
            "connections*rps*p99_ms*",
            "1 * 1.00x * 1.00x",
            "2 *x *x",
            "*best*",
        ]
    )


def test_matrix_for_two_parameters_puts_one_on_each_axis(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(_matrix_test({"size": ["small", "big"], "mode": ["x", "y", "z"]}))
    result = pytester.runpytest_subprocess("--netbench", "--netbench-metrics", "rps,errors_total")
    result.assert_outcomes(passed=6)
    # Fewer values across: `size` (2 values) becomes the column axis, `mode` the rows.
    result.stdout.fnmatch_lines(
        ["*size=small*size=big*", "mode*rps*errors_total*rps*errors_total*", "x *", "y *", "z *"]
    )


def test_matrix_for_three_parameters_folds_extra_into_rows(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(_matrix_test({"a": ["a1", "a2"], "b": ["b1", "b2"], "c": ["c1", "c2"]}))
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(passed=8)
    # One parameter across, the other two side by side down the rows.
    result.stdout.fnmatch_lines(["*a=a1*a=a2*", "c *b *rps*p99_ms*rps*p99_ms*"])
    lines = result.stdout.str().split("= netbench =", 1)[1].splitlines()
    data_rows = [line for line in lines if line.split()[:1] in (["b1"], ["b2"], ["c1"], ["c2"])]
    assert len(data_rows) == 4, lines  # two row parameters x two values, one column axis


def test_json_file_holds_every_result_and_the_environment(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(_matrix_test({"connections": [1, 3]}))
    out = pytester.path / "out" / "results.json"
    result = pytester.runpytest_subprocess(
        "--netbench", f"--netbench-json={out}", "--netbench-trials=2"
    )
    result.assert_outcomes(passed=2)
    data = _load_json(out)
    env = data["environment"]
    assert env["cpu_model"] and env["cores_logical"] >= 1 and env["python_version"]
    assert env["packages"]["pytest_netbench"]
    records = data["records"]
    assert len(records) == 4  # 2 tests x 2 trials
    assert sorted((r["params"]["connections"], r["trial"]) for r in records) == [
        ("1", 0),
        ("1", 1),
        ("3", 0),
        ("3", 1),
    ]
    for rec in records:
        res = rec["result"]
        assert res["sent"] == res["ok"] + res["errors_total"] + res["in_flight"]
        assert res["ok"] == 100
        assert rec["started"] <= rec["ended"]
        assert rec["function"].endswith("::test_grid")


def test_markdown_file_and_github_step_summary(
    pytester: pytest.Pytester, hello_app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(_matrix_test({"connections": [1, 2]}))
    summary = pytester.path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    md = pytester.path / "matrices.md"
    result = pytester.runpytest_subprocess("--netbench", f"--netbench-markdown={md}")
    result.assert_outcomes(passed=2)
    text = md.read_text()
    assert "test_grid" in text
    assert "| connections" in text and "---:" in text
    appended = summary.read_text()
    assert appended.startswith("earlier step\n") and "test_grid" in appended


def test_junit_xml_carries_the_results(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(_matrix_test({"connections": [1]}))
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess("--netbench", f"--junitxml={xml}")
    result.assert_outcomes(passed=1)
    assert '<property name="netbench"' in Path(xml).read_text()


def test_benchmark_json_in_pytest_benchmark_format(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(_matrix_test({"connections": [1, 2]}))
    out = pytester.path / "bench.json"
    result = pytester.runpytest_subprocess(
        "--netbench", f"--netbench-benchmark-json={out}", "--netbench-trials=2"
    )
    result.assert_outcomes(passed=2)
    data = _load_json(out)
    assert {"machine_info", "commit_info", "benchmarks", "datetime", "version"} <= set(data)
    benches = data["benchmarks"]
    assert sorted(b["param"] for b in benches) == ["1", "2"]
    for bench in benches:
        stats = bench["stats"]
        assert stats["rounds"] == 200  # every ok response of both trials is a round
        assert 0 < stats["min"] <= stats["median"] <= stats["max"]
        assert bench["extra_info"]["trials"] == 2


def _load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


UPDATE_JSON_HOOK = """

def pytest_netbench_update_json(config, payload):
    payload["ci"] = {"build": "42", "records_seen": len(payload["records"])}
"""


def test_update_json_hook_adds_fields_to_written_and_saved_sessions(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + UPDATE_JSON_HOOK)
    pytester.makepyfile(_matrix_test({"connections": [1]}))
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(
        "--netbench", f"--netbench-json={out}", "--netbench-save=tagged"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*results written to*", "*run saved as *0001_tagged.json*"])
    (stored,) = (pytester.path / ".netbench").glob("*/0001_tagged.json")
    for path in (out, stored):
        assert _load_json(path)["ci"] == {"build": "42", "records_seen": 1}
    # The extra field does not stop the stored run from being a baseline.
    again = pytester.runpytest_subprocess("--netbench", "--netbench-compare=tagged")
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(
        ["*Comparison with baseline 0001_tagged.json*", "No gate: report only*"]
    )


def test_a_test_names_its_own_matrix_columns_with_the_marker(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.netbench(metrics=["rps", "mean_ms", "max_ms", "mib_read_per_s"])
@pytest.mark.parametrize("connections", [1, 2])
def test_own(netbench, hello, connections):
    netbench.http(hello().url, requests=50, connections=connections)

@pytest.mark.parametrize("connections", [1, 2])
def test_default(netbench, hello, connections):
    netbench.http(hello().url, requests=50, connections=connections)

@pytest.mark.netbench(metrics=["no_such_metric"])
def test_bad(netbench, hello):
    netbench.http(hello().url, requests=5, connections=1)
"""
    )
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_own*",
            "connections*rps*mean_ms*max_ms*mib_read_per_s*",
            "*test_default*",
            "connections*rps*p99_ms*",
        ]
    )
    result.stdout.fnmatch_lines(["*@pytest.mark.netbench(metrics=...): unknown metric*"])
