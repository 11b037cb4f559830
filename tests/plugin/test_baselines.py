"""End-to-end: --netbench-save / --netbench-compare / --netbench-compare-fail, and A/B mode."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

# The test reads the server's per-request delay from the environment, so the same file
# is a fast "baseline" run and a slowed-down "current" run.
DELAYED_TEST = """
import os

def test_hello(netbench, hello):
    srv = hello("--delay-ms", os.environ.get("HELLO_DELAY_MS", "0"))
    netbench.http(srv.url, requests=60, connections=2)
"""


def test_save_then_compare_prints_the_change(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(DELAYED_TEST)
    first = pytester.runpytest_subprocess("--netbench", "--netbench-save", "base")
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*run saved as *0001_base.json*"])
    stored = list((pytester.path / ".netbench").glob("*/0001_base.json"))
    assert len(stored) == 1
    assert _load_json(stored[0])["records"][0]["nodeid"].endswith("::test_hello")

    second = pytester.runpytest_subprocess(
        "--netbench", "--netbench-compare", "--netbench-html=report.html"
    )
    second.assert_outcomes(passed=1)
    assert second.ret == 0
    second.stdout.fnmatch_lines(["*Comparison with baseline 0001_base.json*", "*test_hello*"])
    # No thresholds, no gate: nothing passed, nothing could fail, and no badge says so.
    second.stdout.fnmatch_lines(["*p99_ms*", "No gate: report only (no thresholds given)*"])
    second.stdout.no_fnmatch_line("*Gate passed*")
    page = (pytester.path / "report.html").read_text()
    assert "<b>gate</b>" not in page
    assert "Gate passed" not in page and 'class="gate good"' not in page
    assert "No gate: report only" in page


def test_compare_fail_fails_the_session_on_a_real_regression(
    pytester: pytest.Pytester, hello_app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(DELAYED_TEST)
    trials = "--netbench-trials=5"  # enough for Mann-Whitney to reach significance
    base = pytester.runpytest_subprocess("--netbench", trials, "--netbench-save", "fast")
    base.assert_outcomes(passed=1)

    monkeypatch.setenv("HELLO_DELAY_MS", "5")  # each request now takes >= 5 ms
    slow = pytester.runpytest_subprocess(
        "--netbench", trials, "--netbench-compare", "fast", "--netbench-compare-fail", "p50_ms:10%"
    )
    slow.assert_outcomes(passed=1)  # every test passed; the gate fails the session
    assert slow.ret == pytest.ExitCode.TESTS_FAILED
    slow.stdout.fnmatch_lines(["*REGRESSION*", "*Gate FAILED: 1 regression(s)*"])
    # The last line a CI log shows says why the status is 1, below pytest's "1 passed".
    last, before = [line for line in slow.stdout.lines if line.strip()][-1:-3:-1]
    assert "1 passed" in before
    assert "netbench: Gate FAILED: 1 regression(s)" in last


# Leaves a mark when the test runs at all.
MARKED_TEST = """
from pathlib import Path

def test_hello(netbench, hello):
    Path("ran").touch()
    netbench.http(hello().url, requests=60, connections=2)
"""


def test_a_stored_run_that_does_not_exist_stops_the_session_before_any_load(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(MARKED_TEST)
    pytester.runpytest_subprocess("--netbench", "--netbench-save", "main").assert_outcomes(passed=1)
    (pytester.path / "ran").unlink()
    result = pytester.runpytest_subprocess("--netbench", "--netbench-compare", "mian")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--netbench-compare mian: no stored run 'mian' under *; available: 0001_main*"]
    )
    assert not (pytester.path / "ran").exists()  # no test, no load ran


def test_compare_without_a_stored_run_says_what_to_do(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(MARKED_TEST)
    result = pytester.runpytest_subprocess("--netbench", "--netbench-compare")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no stored runs for this machine*--netbench-save NAME*"])
    result.stderr.no_fnmatch_line("*Traceback*")
    assert not (pytester.path / "ran").exists()


def test_compare_fail_needs_something_to_compare_with(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--netbench", "--netbench-compare-fail", "rps:5%")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--netbench-compare-fail needs*--netbench-compare*"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("p99_ms=10", "*cannot read threshold*METRIC:LIMIT*"),
        # A part of the result that is no number: what to name in it.
        ("latency:10%", "*'latency' is not a number*e.g. latency.p99_ms or p99_ms*"),
        # No unit: 10 ms or 10 %? Refused, with both spellings.
        ("p99_ms:10", "*'p99_ms:10': *write p99_ms:10% (10 % of the baseline) or p99_ms:10ms*"),
    ],
)
def test_bad_threshold_is_a_usage_error(pytester: pytest.Pytester, spec: str, message: str) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-compare", "--netbench-compare-fail", spec
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_ab_mode_interleaves_trials_and_gates_head_against_base(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("server", ["replaced", "by-the-pair"], indirect=True)
        def test_hello(netbench, server):
            netbench.http(server.url, requests=60, connections=2)
        """
    )
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}}"
    out = pytester.path / "ab.json"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        app,
        f"{app} --delay-ms 5",
        "--netbench-trials=5",  # 5 a side: the fewest that can reach alpha = 0.01
        "--netbench-compare-fail=p50_ms:10%",
        f"--netbench-json={out}",
    )
    # The `server` parameter no longer matters: one test runs, against both servers.
    result.assert_outcomes(passed=1, deselected=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "arm *rps*p99_ms*",
            "base *",
            "head *",
            "A/B mode: BASE = *hello_app.py*",
            "*HEAD = *hello_app.py*--delay-ms 5",
            "*Comparison with baseline BASE*",
            "*Gate FAILED: 1 regression(s)*",
        ]
    )
    records = sorted(_load_json(out)["records"], key=lambda r: r["started"])
    arms = [r["params"]["arm"] for r in records]
    assert arms == ["base", "head", "head", "base", "base", "head", "head", "base", "base", "head"]
    assert all(r["result"]["ok"] == 60 for r in records)


def _load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
