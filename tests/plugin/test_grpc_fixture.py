"""End-to-end: ``netbench.grpc(...)`` in a test against the catalog's grpcio server (issue
22), recorded like any load; a bad method fails the test with the library's message. And
``netbench.http(..., protocol="h2")`` at the catalog's HTTP/2 apps, started by name."""

from __future__ import annotations

import importlib.util
import json

import pytest

GRPC_TESTS = """
import pytest


@pytest.fixture
def echo(netbench_server):
    return netbench_server("grpcio", app="grpc")


def test_say(netbench, echo):
    r = netbench.grpc(echo, "/netbench.Echo/Say", b"hi", streams=4, requests=100)
    assert (r.sent, r.ok, r.errors_total) == (100, 100, 0)
    assert r.status_codes == {0: 100}


def test_fail(netbench, echo):
    r = netbench.grpc(echo, "/netbench.Echo/Fail", requests=10, allow_invalid=True)
    assert r.status_codes == {5: 10}


def test_bad_method(netbench, echo):
    netbench.grpc(echo, "Say", requests=1)
"""


def test_a_grpc_load_is_recorded(pytester: pytest.Pytester) -> None:
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("grpcio is not installed")
    pytester.makepyfile(GRPC_TESTS)
    result = pytester.runpytest_subprocess("--netbench", "--netbench-json=out.json")
    result.stdout.fnmatch_lines(["*a gRPC method is '/package.Service/Method', got 'Say'*"])
    result.assert_outcomes(passed=2, failed=1)
    records = json.loads((pytester.path / "out.json").read_text())
    codes = {
        r["function"].rpartition("::")[2]: r["result"]["status_codes"] for r in records["records"]
    }
    assert codes == {"test_say": {"0": 100}, "test_fail": {"5": 10}}


H2_TESTS = """
import pytest


@pytest.mark.parametrize("name", ["go", "hypercorn"])
@pytest.mark.parametrize("app", ["h2c", "h2"])
def test_h2(netbench, netbench_server, name, app):
    server = netbench_server(name, app=app)
    r = netbench.http(server, protocol="h2", streams=5, requests=200, verify_tls=False)
    assert (r.sent, r.ok, r.errors_total) == (200, 200, 0)
    assert r.url.startswith("https://" if app == "h2" else "http://")
"""


def test_http2_loads_at_catalog_servers_named_in_a_test(pytester: pytest.Pytester) -> None:
    pytest.importorskip("hypercorn")
    pytester.makepyfile(H2_TESTS)
    result = pytester.runpytest_subprocess("--netbench", "-rs")
    outcomes = result.parseoutcomes()  # without Go, its two are skipped with the reason
    assert "failed" not in outcomes and "errors" not in outcomes, result.stdout.str()
    assert outcomes["passed"] + outcomes.get("skipped", 0) == 4
    assert outcomes["passed"] >= 2  # hypercorn's
