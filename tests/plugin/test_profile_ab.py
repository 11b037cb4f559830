"""The A/B recipe with profiles (--netbench-profile): a HEAD that spends extra CPU in one
named function fails the gate, and "where the time went" names that function first; the
same server on both sides names none. Real gunicorn, real py-spy."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from pytest_netbench._servers.profiling import find_py_spy

pytestmark = pytest.mark.skipif(find_py_spy() is None, reason="the profile extra (py-spy)")
APP = Path(__file__).parent / "two_revisions_app.py"
TEST = """
def test_page(netbench, server):
    netbench.http(server.url, server=server, connections=4, duration=0.5, allow_invalid=True)
"""


def _run(pytester: pytest.Pytester, base_slow: str, head_slow: str) -> pytest.RunResult:
    shutil.copy(APP, pytester.path / "app.py")
    pytester.makepyfile(test_page=TEST)
    gunicorn = f"{sys.executable} -m gunicorn -w 2 -b {{host}}:{{port}} app:app"
    return pytester.runpytest_subprocess(
        "--netbench",
        "--netbench-profile",
        "--netbench-ab",
        f"env SLOW={base_slow} {gunicorn}",
        f"env SLOW={head_slow} {gunicorn}",
        "--netbench-trials=5",
        "--netbench-compare-fail=server.cpu_ms_per_request:10%",
        f"--netbench-json={pytester.path / 'ab.json'}",
        f"--netbench-markdown={pytester.path / 'ab.md'}",
        f"--netbench-html={pytester.path / 'ab.html'}",
    )


def test_the_gate_fails_and_names_the_function_that_took_the_added_cpu(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, "0", "1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*Gate FAILED: 1 regression(s)*",
            "Where the time went: test_page*",
            "*base ms/req*head ms/req*change*of change*function",
            "*[*] audit_log (app.py)",  # first, and beyond noise
        ]
    )
    markdown = (pytester.path / "ab.md").read_text()
    assert "#### Where the time went: `test_page" in markdown
    records = json.loads((pytester.path / "ab.json").read_text())["records"]
    profiled = [r for r in records if r["result"]["profile"]]
    assert sorted(r["params"]["arm"] for r in profiled) == ["base", "head"]  # one run each
    # The HTML's differential flame graph: audit_log, which HEAD alone runs, is the one
    # frame in the deepest red (the largest change of its own CPU per request).
    html = (pytester.path / "ab.html").read_text()
    assert "Differential flame graph: base " in html
    deepest = re.findall(r'background:hsl\(0,80%,58%\)" title="([^:"]+):', html)
    assert deepest == ["audit_log (app.py)"], deepest


def test_the_same_server_on_both_sides_names_no_function(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "0", "0")
    result.stdout.fnmatch_lines(["Where the time went: test_page*", "*no function changed beyond*"])
