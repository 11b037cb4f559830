"""End to end: --netbench-sequential adds trials in batches until the gate decides, in A/B
mode and against a stored run; the header says what the gate will do before any load;
`netbench compare` on the files gives the verdict the session gave."""

from __future__ import annotations

import json
import math
import re
import statistics
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


def test_a_decided_gate_says_no_more_trials_are_needed(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    """A server 10 % slower (11 ms against 10 ms a request) fails the gate at an early
    look. The metrics shown beside it, not gated, hold no trials back: they are judged at
    the trials there are, and no note calls the decided run undecided."""
    pytester.makepyfile(AB_TEST)
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}}"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        f"{app} --delay-ms 10",
        f"{app} --delay-ms 11",
        "--netbench-sequential=3:9",
        "--netbench-compare-fail=p50_ms:5%",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*Gate FAILED: 1 regression(s)*"])
    result.stdout.no_fnmatch_line("*more trials needed*")
    result.stdout.no_fnmatch_line("*undecided*")


def test_a_gate_that_decided_early_prints_the_figures_it_read(
    pytester: pytest.Pytester, hello_app: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A baseline of 5 stored trials, compared sequentially: the gate lets both gated
    metrics go as ok at an early look. Each ok row shows the interval that rules a
    worsening past the limit out, n says both sides' trials, and no note says the metrics
    are undecided. (The server takes 2 ms a request: a 0 ms one's p50 can move so much a
    trial on a busy machine that even 50 % is past what the trials can show.)"""
    monkeypatch.setenv("HELLO_DELAY_MS", "2")
    pytester.makepyfile(DELAYED_TEST)
    base = pytester.runpytest_subprocess("--netbench", "--netbench-trials=5", "--netbench-save=b")
    base.assert_outcomes(passed=1)
    head = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-compare=b",
        "--netbench-sequential",
        "--netbench-compare-fail=p50_ms:50%,rps:50%",
        "--netbench-json=head.json",
    )
    assert head.ret == pytest.ExitCode.OK, head.stdout.str()
    head.stdout.fnmatch_lines(["*Gate passed: 0 regression(s), 0 unclear, 0 improved, 2 ok*"])
    head.stdout.no_fnmatch_line("*more trials needed*")
    head.stdout.no_fnmatch_line("*undecided*")
    trials = len(_records(pytester.path / "head.json"))
    (compared,) = json.loads((pytester.path / "head.json").read_text())["comparisons"]
    gated = {i["metric"]: i for i in compared["items"] if i["gated"]}
    assert {m: i["verdict"] for m, i in gated.items()} == {"p50_ms": "ok", "rps": "ok"}
    for item in gated.values():
        if item.get("by_estimate"):  # the budget spent: read from the estimate, and said so
            assert abs(item["change"]) <= 0.5
            continue
        low, high = item["change_interval"]
        if item["metric"] == "p50_ms":  # a rise past 50 % is ruled out
            assert high is not None and high <= 0.5 + 1e-9, item
        else:  # a drop past 50 % is ruled out
            assert low is not None and low >= -0.5 - 1e-9, item
    rows = [line.split() for line in head.stdout.lines if line.startswith("  p50_ms ")]
    assert rows and rows[-1][6:8] == [f"{trials}/5", "ok"], rows


def test_ab_change_column_is_the_estimate_the_verdict_read(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    """The verdict reads the Hodges-Lehmann estimate of the shift (the median of the
    trial-against-trial changes), so the change column and the JSON's change are that
    figure, not the change of the two medians."""
    pytester.makepyfile(AB_TEST)
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}}"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        app,
        f"{app} --delay-ms 1",
        "--netbench-trials=6",
        "--netbench-compare-fail=p50_ms:5%",
        "--netbench-json=ab.json",
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    (compared,) = json.loads((pytester.path / "ab.json").read_text())["comparisons"]
    (p50,) = [item for item in compared["items"] if item["metric"] == "p50_ms"]
    cur, base = p50["current_values"], p50["baseline_values"]
    estimate = math.expm1(statistics.median(math.log(c / b) for c in cur for b in base))
    assert p50["change"] == pytest.approx(estimate, rel=1e-9, abs=1e-12)
    rows = [line.split() for line in result.stdout.lines if line.startswith("  p50_ms ")]
    percent = estimate * 100
    assert rows[-1][3] == (f"{percent:+.1f}%" if abs(percent) < 1000 else f"{percent:+.0f}%")
    words = " ".join(result.stdout.str().split())
    assert "change: the estimate the verdict read (Hodges-Lehmann" in words


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
    # 2 ms a request: p50 moves a few % a trial, well within what 6 trials can show at 50 %.
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}} --delay-ms 2"
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


# Busy per request (plain Python work: user CPU), 200 requests a trial.
BUSY_TEST = """
import pytest

@pytest.mark.parametrize("server", ["replaced-by-the-pair"], indirect=True)
def test_busy(netbench, server):
    netbench.http(server.url, requests=200, connections=2)
"""
RECIPE = "--netbench-compare-fail=p50_ms:5%,server.cpu_ms_per_request:5%"


def _items(path: Path) -> dict[str, dict[str, Any]]:
    (compared,) = json.loads(path.read_text())["comparisons"]
    return {item["metric"]: item for item in compared["items"]}


def test_ab_sequential_catches_a_cpu_regression(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    """The recipe on a CPU-bound server whose HEAD does twice the work per request (its
    CPU per request about +40 %): a regression, and the table shows the server's CPU
    split, the work being user time. (A HEAD with 20 % more work, +8 % CPU, was called
    undetectable once on a busy CI runner whose trials moved 15 %: right, but not what
    this test is about.)"""
    pytester.makepyfile(BUSY_TEST)
    app = f"{sys.executable} hello_app.py --host {{host}} --port {{port}} --work"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        f"{app} 4000",
        f"{app} 8000",
        "--netbench-sequential",
        RECIPE,
        "--netbench-json=ab.json",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*Gate FAILED: * regression(s)*"])
    items = _items(pytester.path / "ab.json")
    assert "regression" in {
        items["p50_ms"]["verdict"],
        items["server.cpu_ms_per_request"]["verdict"],
    }
    assert items["server.cpu_ms_per_request"]["change"] > 0.05
    # The split beside the gate's metrics: the added work is Python, user time.
    user, system = (
        items["server.cpu_user_ms_per_request"],
        items["server.cpu_system_ms_per_request"],
    )
    assert user["current_median"] > user["baseline_median"]
    assert user["current_median"] > system["current_median"]
    rows = {line.split()[0] for line in result.stdout.lines if line.startswith("  ")}
    assert {"cpu_ms/req", "user_ms/req", "sys_ms/req"} <= rows


def test_an_aa_the_runner_cannot_judge_stops_within_half_the_budget_and_says_why(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    """An A/A whose p50 moves far more from trial to trial than the 5 % asked: each server
    waits a different time per block of 200 requests (the same blocks in both copies, so
    nothing changed between the arms). At the look at 9 trials a side, half its budget, the
    gate knows it can never show 5 % within 18, and stops: undetectable, named with the
    noise and what the budget could show, the CPU figure pointed to, each look in the
    test's report; the session exits 10 (neither passed nor failed)."""
    pytester.makepyfile(BUSY_TEST)
    app = (
        f"{sys.executable} hello_app.py --host {{host}} --port {{port}} --work 4000"
        " --cycle-ms 1,2.5,1.5,3,2,1.2 --cycle-every 200"
    )
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab",
        app,
        app,
        "--netbench-sequential",
        "--netbench-compare-fail=p50_ms:5%",
        "--netbench-json=aa.json",
        "-rP",
    )
    assert result.ret == 10, result.stdout.str()
    arms = [r["params"]["arm"] for r in _records(pytester.path / "aa.json")]
    assert arms.count("base") == arms.count("head") == 9  # half the budget of 18
    p50 = _items(pytester.path / "aa.json")["p50_ms"]
    assert p50["verdict"] == "undetectable" and p50["detectable"] > 0.05
    words = " ".join(result.stdout.str().split())
    assert re.search(
        r"p50_ms: this runner's noise \([\d.]+ % a trial\) hides changes under [\d.]+ %"
        r" even at 18 trials a side; the gate asked 5 %",
        words,
    ), words
    assert "server.cpu_ms_per_request moves" in words
    result.stdout.fnmatch_lines(
        [
            "gate look after 3 trial(s) a side: continue; p50_ms continue (*",
            "gate look after 6 trial(s) a side: continue; p50_ms continue (*",
            "gate look after 9 trial(s) a side: undetectable; p50_ms undetectable (*",
            "*Gate cannot tell: 0 regression(s), 0 unclear, 1 undetectable, 0 improved, 0 ok*",
        ]
    )
    result.stdout.no_fnmatch_line("*Gate passed*")
    assert "netbench: Gate cannot tell" in [line for line in result.stdout.lines if line][-1]
