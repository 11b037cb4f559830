"""End-to-end: --netbench-save / --netbench-compare / --netbench-compare-fail, and A/B mode."""

from __future__ import annotations

import json
import os
import shutil
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


CHECKOUT_TEST = """
import os
import sys

import pytest

from pytest_netbench import LogReady, ServerSpec

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = ["--host", "{host}", "--port", "{port}", "--delay-ms", "1"]
CPU = str(max(os.sched_getaffinity(0)))
DICT = {
    "name": "sync-w1",
    "command": [sys.executable, "hello_app.py", *ARGS, "--report-to", "dict.json"],
    "cwd": "app",
    "env": {"NETBENCH_FLAVOUR": "w1"},
    "cpus": CPU,
    "ready": LogReady("serving on"),
}
# A spec naming its script by an absolute path into this checkout: the base arm runs the
# base's copy.
SPEC = ServerSpec(
    name="spec-w2",
    app="hello",
    command=(
        sys.executable, os.path.join(HERE, "app", "hello_app.py"), *ARGS, "--report-to",
        "spec.json",
    ),
    cwd=os.path.join(HERE, "app"),
    env={"NETBENCH_FLAVOUR": "w2"},
    port_pattern=r"NETBENCH_LISTENING port=(\\d+)",
)


@pytest.mark.parametrize("server", [DICT, SPEC], indirect=True)
def test_hello(netbench, server):
    netbench.http(server.url, requests=60, connections=2)
"""


def test_ab_from_a_base_checkout_keeps_each_server_spec_and_names_the_arms(
    pytester: pytest.Pytester, hello_app: Path
) -> None:
    """--netbench-ab-base-dir: each parametrised server spec runs twice, HEAD from this
    checkout and BASE from the same place in the base checkout, with its env, CPUs and
    ready check kept; every table names the arm beside the server's own id."""
    for where in (pytester.path / "app", pytester.path / "base" / "app"):
        where.mkdir(parents=True)
        shutil.copyfile(hello_app, where / "hello_app.py")
    pytester.makepyfile(CHECKOUT_TEST)
    out = pytester.path / "ab.json"
    result = pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-ab-base-dir=base",
        "--netbench-trials=2",
        "--netbench-compare-fail=p50_ms:50%",
        f"--netbench-json={out}",
    )
    result.assert_outcomes(passed=2)  # each spec its own test: nothing deselected
    cpu = max(os.sched_getaffinity(0))
    for name, flavour in (("dict.json", "w1"), ("spec.json", "w2")):
        for checkout in (pytester.path, pytester.path / "base"):
            ran = json.loads((checkout / "app" / name).read_text())
            assert ran["cwd"] == str(checkout / "app"), ran
            assert ran["script"] == str(checkout / "app" / "hello_app.py"), ran
            assert ran["env"]["NETBENCH_FLAVOUR"] == flavour, ran
            if name == "dict.json":  # pinned as the spec says, on both arms
                assert ran["cpus"] == [cpu], ran
    result.stdout.fnmatch_lines(
        [
            "*arm=base*arm=head*",
            "server *rps*p99_ms*rps*p99_ms*",
            "sync-w1 *",
            "spec-w2 *",
            f"A/B mode: BASE = each test's server, started from {pytester.path / 'base'}",
            "*Comparison with baseline BASE*",
            "test_hello[[]server=sync-w1[]]",
            "test_hello[[]server=spec-w2[]]",
        ]
    )
    records = _load_json(out)["records"]
    assert sorted((r["params"]["server"], r["params"]["arm"]) for r in records) == [
        ("spec-w2", "base"),
        ("spec-w2", "base"),
        ("spec-w2", "head"),
        ("spec-w2", "head"),
        ("sync-w1", "base"),
        ("sync-w1", "base"),
        ("sync-w1", "head"),
        ("sync-w1", "head"),
    ]
    (compared,) = _load_json(out)["comparisons"]
    assert {i["test"] for i in compared["items"]} == {
        "test_hello[server=sync-w1]",
        "test_hello[server=spec-w2]",
    }


def test_a_failing_arm_names_its_server_for_its_arm(
    pytester: pytest.Pytester, hello_app: Path
) -> None:
    """A failed test's report shows each arm's server log under the server's name and arm."""
    (pytester.path / "base").mkdir()
    shutil.copyfile(hello_app, pytester.path / "base" / "hello_app.py")
    pytester.makepyfile(
        f"""
        import pytest

        COMMAND = [{sys.executable!r}, "hello_app.py", "--host", "{{host}}", "--port", "{{port}}"]

        @pytest.mark.parametrize("server", [{{"name": "w1", "command": COMMAND}}], indirect=True)
        def test_hello(netbench, server):
            netbench.http(server.url, requests=20, connections=1)
            assert False, "on purpose"
        """
    )
    result = pytester.runpytest_subprocess("--netbench", "--netbench-ab-base-dir=base")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*netbench server log: w1 [[]base[]]*", "*netbench server log: w1 [[]head[]]*"]
    )


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ("'tornado'", "*'tornado' is a catalog server*its code is pytest-netbench's*"),
        (
            "{'command': ['x', '{port}'], 'cwd': '/'}",
            "*its working directory '/' is outside the checkout pytest runs in*",
        ),
    ],
)
def test_what_cannot_run_from_a_base_checkout_fails_saying_why(
    pytester: pytest.Pytester, server: str, message: str
) -> None:
    (pytester.path / "base").mkdir()
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.parametrize("server", [{server}], indirect=True)
        def test_x(netbench, server):
            pass
        """
    )
    result = pytester.runpytest_subprocess("--netbench", "--netbench-ab-base-dir=base")
    result.assert_outcomes(errors=1)  # at set-up: the server fixture, before any load
    result.stdout.fnmatch_lines([message])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--netbench-ab-base-dir=nowhere"], "*--netbench-ab-base-dir 'nowhere': no such dir*"),
        (
            ["--netbench-ab-base-dir=.", "--netbench-ab", "a {port}", "b {port}"],
            "*--netbench-ab-base-dir and --netbench-ab are two ways to name the base*",
        ),
    ],
)
def test_base_checkout_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--netbench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
