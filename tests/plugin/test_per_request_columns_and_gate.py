"""End-to-end: per-request metric names (issue 18) as matrix columns and gate limits.

The session-wide flags (``--netbench-metrics``, ``--netbench-compare-fail``) take
``by_request.NAME.METRIC`` checked for its shape at configure time; a test whose load sends
no request NAME says so in its cell ("no NAME") and its gate verdict, and a name no test
sent at all fails the session naming the ones there were.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# Two tests: one sends a mix of "list" and "item", the other no mix. The server's delay
# comes from the environment, so the same file is a fast baseline and a slow current run.
MIX_TESTS = """
import os

from pytest_netbench import Request

MIX = [Request("GET", "/list", name="list"), Request("GET", "/item", name="item")]


def test_mix(netbench, hello):
    srv = hello("--delay-ms", os.environ.get("HELLO_DELAY_MS", "0"))
    netbench.http(srv.url, mix=MIX, requests=60, connections=2)


def test_plain(netbench, hello):
    srv = hello()
    netbench.http(srv.url, requests=60, connections=2)
"""


def test_the_matrix_shows_a_per_request_column(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(MIX_TESTS)
    metrics = "rps,by_request.list.p99_ms,by_request.item.ok"
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-metrics", metrics, "--netbench-markdown=out.md"
    )
    result.assert_outcomes(passed=2)
    markdown = (pytester.path / "out.md").read_text()
    assert "by_request.list.p99_ms" in markdown and "| no list |" in markdown
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*::test_mix*",
            "*rps*by_request.list.p99_ms*by_request.item.ok*",
            "test_mix * 30",  # the item kind's ok count: half of 60
            "*::test_plain*",
            "test_plain *no list*no item",  # this load sent no such request: said, not 0
        ]
    )
    assert "nan" not in out


def test_a_tests_own_metrics_marker_takes_per_request_columns(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(
        """
import pytest
from pytest_netbench import Request

@pytest.mark.netbench(metrics=["by_request.list.ok", "by_request.item.errors_total"])
def test_mix(netbench, hello):
    srv = hello()
    mix = [Request("GET", "/list", name="list"), Request("GET", "/item", name="item")]
    netbench.http(srv.url, mix=mix, requests=40, connections=2)
"""
    )
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*by_request.list.ok*by_request.item.errors_total*", "* 20 * 0"])


def test_an_unknown_per_request_figure_is_refused_before_any_load(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(MIX_TESTS)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-metrics", "by_request.list.p999"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*'p999' is no figure of a request kind; use one of ok, sent, errors_total*p99_ms*"]
    )


def test_a_gate_on_a_per_request_metric_catches_that_requests_regression(
    pytester: pytest.Pytester, hello_app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(MIX_TESTS)
    trials = "--netbench-trials=5"  # enough for Mann-Whitney to reach significance
    base = pytester.runpytest_subprocess(
        "--netbench", trials, "--netbench-save", "fast", "--netbench-json=base.json"
    )
    base.assert_outcomes(passed=2)

    monkeypatch.setenv("HELLO_DELAY_MS", "5")  # the mix's requests now take >= 5 ms
    gate = "by_request.list.p50_ms:10%"
    slow = pytester.runpytest_subprocess(
        "--netbench",
        trials,
        "--netbench-json=head.json",
        "--netbench-compare",
        "fast",
        "--netbench-compare-fail",
        gate,
    )
    slow.assert_outcomes(passed=2)
    assert slow.ret == pytest.ExitCode.TESTS_FAILED
    slow.stdout.fnmatch_lines(
        [
            "*::test_mix",
            "  metric * baseline * verdict",
            "  by_request.list.p50_ms * REGRESSION",
            "*::test_plain",
            # The test without a mix has no "list": its verdict says so, neither ok nor 0.
            "  by_request.list.p50_ms * - * unknown",
            "  note: not compared: no request named 'list' here; its requests: none (no mix)",
            "Gate FAILED: 1 regression(s)*",
        ]
    )

    # A request name no test sent is a misspelling: the session fails naming the real ones.
    typo = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-compare",
        "fast",
        "--netbench-compare-fail",
        "by_request.lst.p50_ms:10%",
    )
    assert typo.ret != 0
    typo.stdout.fnmatch_lines(
        ["*no test in either run sent a request named 'lst'; the requests there are: item, list*"]
    )

    # netbench compare --fail takes the same limit, and refuses the same misspelling.
    compare = [sys.executable, "-m", "pytest_netbench.cli", "compare", "base.json", "head.json"]
    done = subprocess.run(
        [*compare, "--fail", gate], cwd=pytester.path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "by_request.list.p50_ms" in done.stdout and "REGRESSION" in done.stdout
    wrong = subprocess.run(
        [*compare, "--fail", "by_request.lst.p50_ms:10%"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode == 2, wrong.stdout + wrong.stderr
    assert "sent a request named 'lst'; the requests there are: item, list" in wrong.stderr
