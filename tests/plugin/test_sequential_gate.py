"""End to end: --netbench-sequential adds trials in batches until the gate decides, in A/B
mode and against a stored run; the header says what the gate will do before any load;
`netbench compare` on the files gives the verdict the session gave."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

AB_TEST = """
import pytest

@pytest.mark.parametrize("server", ["replaced-by-the-pair"], indirect=True)
def test_hello(netbench, server):
    netbench.http(server.url, requests=60, connections=2)
"""

DELAYED_TEST = """
import os

def test_hello(netbench, hello):
    srv = hello("--delay-ms", os.environ.get("HELLO_DELAY_MS", "0"))
    netbench.http(srv.url, requests=60, connections=2)
"""


def _records(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(path.read_text())["records"]
    return records


def test_ab_sequential_stops_at_the_look_that_decides(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(AB_TEST)
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}}"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        app,
        f"{app} --delay-ms 5",
        "--netbench-sequential=3:9",
        "--netbench-compare-fail=p50_ms:10%",
        "--netbench-json=ab.json",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "netbench gate: p50_ms rise > 10%; sequential, looks after 3, 6, 9 trials a side*",
            "*Gate FAILED: 1 regression(s)*",
        ]
    )
    # 3 trials a side cannot reach the first look's level; 6 fully separated ones do.
    records = sorted(_records(pytester.path / "ab.json"), key=lambda r: r["started"])
    arms = [r["params"]["arm"] for r in records]
    assert arms == ["base", "head", "head", "base"] * 3  # one ABBA pattern over both batches
    # The verdict table travels in the JSON too.
    (compared,) = json.loads((pytester.path / "ab.json").read_text())["comparisons"]
    (p50,) = [item for item in compared["items"] if item["metric"] == "p50_ms"]
    assert (p50["verdict"], p50["trials"], compared["failed"]) == ("regression", 6, True)
    lines = [line for line in result.stdout.lines if line.strip().startswith("p50_ms")]
    assert "REGRESSION" in lines[-1] and "  6  " in lines[-1]


def test_sequential_against_a_stored_run_and_netbench_compare_agree(
    pytester: pytest.Pytester, hello_app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(DELAYED_TEST)
    base = pytester.runpytest_subprocess(
        "--netbench", "--netbench-trials=9", "--netbench-save=fast", "--netbench-json=base.json"
    )
    base.assert_outcomes(passed=1)
    monkeypatch.setenv("HELLO_DELAY_MS", "5")
    head = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-compare=fast",
        "--netbench-sequential=3:9",
        "--netbench-compare-fail=p50_ms:10%",
        "--netbench-json=head.json",
    )
    assert head.ret == pytest.ExitCode.TESTS_FAILED
    head.stdout.fnmatch_lines(["*Gate FAILED: 1 regression(s)*"])
    assert len(_records(pytester.path / "head.json")) == 6
    assert json.loads((pytester.path / "head.json").read_text())["gate"] == {"sequential": [3, 9]}
    command = [sys.executable, "-m", "pytest_netbench.cli", "compare", "base.json", "head.json"]
    done = subprocess.run(
        [*command, "--fail", "p50_ms:10%"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Gate FAILED: 1 regression(s)" in done.stdout


def test_sequential_without_a_change_passes_within_the_budget(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(AB_TEST)
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}}"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        app,
        app,
        "--netbench-sequential=3:6",
        "--netbench-compare-fail=p50_ms:50%",
        "--netbench-alpha=0.05",
        "--netbench-json=aa.json",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*false alarms <= 0.05 per test*", "*Gate passed: 0 regression(s)*"]
    )
    arms = [r["params"]["arm"] for r in _records(pytester.path / "aa.json")]
    assert arms.count("base") == arms.count("head") <= 6
    # The file keeps the rate it was judged at, for `netbench compare` to judge it again.
    assert json.loads((pytester.path / "aa.json").read_text())["gate"] == {
        "sequential": [3, 6],
        "alpha": 0.05,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--netbench-sequential"], "*--netbench-sequential stops when the gate decides*"),
        (
            ["--netbench-compare", "--netbench-compare-fail=rps:5%", "--netbench-sequential=1:4"],
            "*BATCH:BUDGET with 2 <= BATCH <= BUDGET*",
        ),
        (
            [
                "--netbench-compare",
                "--netbench-compare-fail=rps:5%",
                "--netbench-sequential",
                "--netbench-trials=5",
            ],
            "*drop --netbench-trials*",
        ),
        (["--netbench-compare", "--netbench-alpha=0.05"], "*needs --netbench-compare-fail*"),
        (
            ["--netbench-compare", "--netbench-compare-fail=rps:5%", "--netbench-alpha=0.7"],
            "*--netbench-alpha must be between 0 and 0.5 (got 0.7)*",
        ),
    ],
)
def test_sequential_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--netbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
