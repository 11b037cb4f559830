"""``netbench.crosscheck`` in a real pytest run: real wrk and ab against a real server,
recorded as an experiment (its table at the end, its record in the JSON)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

CROSSCHECK_TEST = """
import pytest


@pytest.mark.parametrize("tool", ["wrk", "ab"])
def test_cross(netbench, netbench_server, tool):
    srv = netbench_server("c")  # ab speaks HTTP/1.0: the catalog's servers answer it
    length = {"duration": 1} if tool == "wrk" else {"requests": 300}
    # A closed loop at the C server can saturate one worker on a busy 2-core machine:
    # this test is about the recording, not the figures, so such a result may stand.
    r = netbench.crosscheck(srv, tool=tool, connections=2, allow_invalid=True, **length)
    assert r.netbench.ok > 0 and r.other.requests > 0
    assert r.netbench.errors_total == 0 and r.other.errors_total == 0
    assert r.netbench.server is not None  # the managed server was sampled, as in any load
"""


@pytest.mark.skipif(
    shutil.which("wrk") is None or shutil.which("ab") is None,
    reason="wrk and ab are not both installed (scripts/bootstrap.sh installs them)",
)
def test_crosschecks_are_recorded_and_tabled(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(CROSSCHECK_TEST)
    out = pytester.path / "out.json"
    result = pytester.runpytest_subprocess("--netbench", "-rP", f"--netbench-json={out}")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*netbench results*",
            "http://127.0.0.1:*: crosscheck, netbench vs wrk: * vs * req/s (*), * vs * ms p99 (*)",
            "*= netbench =*",
            "*::test_cross  (crosscheck with a second tool)",
            "tool*rps*tool_rps*ratio*p50_ms*tool_p50*ratio*p99_ms*tool_p99*ratio*errors*tool_errors*valid",
            "wrk *0*0*",
            "ab *0*0*",
        ]
    )
    records = json.loads(out.read_text())["records"]
    assert [(r["kind"], r["experiment"]["tool"]) for r in records] == [
        ("crosscheck", "wrk"),
        ("crosscheck", "ab"),
    ]
    figures = records[1]["experiment"]["figures"]
    assert figures["rps"]["ab"] > 0 and figures["rps"]["ratio"] > 0


def test_a_missing_tool_skips_with_its_package(
    pytester: pytest.Pytester, hello_app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("tool", ["wrk", "ab"])
        def test_cross(netbench, hello, tool):
            netbench.crosscheck(hello(), tool=tool, requests=10 if tool == "ab" else None)
        """
    )
    monkeypatch.setenv("PATH", str(pytester.mkdir("empty")))
    result = pytester.runpytest_subprocess("--netbench", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*SKIPPED*netbench crosscheck: wrk is not installed*apt-get install wrk*",
            "*SKIPPED*netbench crosscheck: ab is not installed*apt-get install apache2-utils*",
        ]
    )


def test_a_load_the_tool_cannot_run_fails_the_test(
    pytester: pytest.Pytester, hello_app: Path
) -> None:
    pytester.makepyfile(
        """
        def test_cross(netbench, hello):
            netbench.crosscheck(hello(), tool="ab", duration=1)
        """
    )
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*netbench: ab sends a number of requests: pass requests=*"])


H2LOAD_TEST = """
import pytest


def test_cross_h2(netbench, go_h2c):
    r = netbench.crosscheck(go_h2c, tool="h2load", duration=1, connections=2, streams=4,
                            allow_invalid=True)
    assert r.netbench.generator.protocol == "h2"
    assert r.netbench.ok > 0 and r.other.requests > 0
    assert r.netbench.errors_total == 0 and r.other.errors_total == 0
"""


@pytest.mark.skipif(shutil.which("h2load") is None, reason="h2load is not installed")
def test_an_h2load_crosscheck_is_recorded(pytester: pytest.Pytester) -> None:
    from pytest_netbench import ToolchainMissing, catalog
    from pytest_netbench._servers import build

    try:
        binary = str(build.ensure_built(catalog.GO_H2).artifact)
    except ToolchainMissing as exc:
        pytest.skip(f"the Go HTTP/2 server cannot be built here: {exc}")
    fixture = f"""
import pytest
from pytest_netbench import Server, catalog


@pytest.fixture
def go_h2c():
    server = Server([{binary!r}, "h2c", "{{host}}", "{{port}}"], port_pattern=catalog.PORT_PATTERN)
    server.start()
    yield f"http://127.0.0.1:{{server.port}}/"
    server.stop()
"""
    pytester.makeconftest(fixture)
    pytester.makepyfile(H2LOAD_TEST)
    out = pytester.path / "out.json"
    result = pytester.runpytest_subprocess("--netbench", "-rP", f"--netbench-json={out}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["http://127.0.0.1:*: crosscheck, netbench vs h2load: * vs * req/s (*), * vs * ms mean (*)"]
    )
    [record] = json.loads(out.read_text())["records"]
    figures = record["experiment"]["figures"]
    assert set(figures) == {"rps", "mean_ms", "stdev_ms", "max_ms", "errors"}
    assert figures["rps"]["h2load"] > 0
