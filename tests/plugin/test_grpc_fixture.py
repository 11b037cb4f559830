"""End-to-end: ``netbench.grpc(...)`` in a test against the catalog's grpcio server (issue
22), recorded like any load; a bad method fails the test with the library's message."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pytest_netbench._servers import catalog

SCRIPT = Path(catalog.__file__).parent / "apps" / "python" / "grpcio_server.py"

GRPC_TESTS = """
import sys

import pytest

from pytest_netbench import Server
from pytest_netbench._servers import catalog


@pytest.fixture(scope="module")
def echo():
    command = [sys.executable, SCRIPT, "--app", "grpc", "--host", "{host}", "--port", "{port}"]
    server = Server(command, port_pattern=catalog.PORT_PATTERN, name="grpcio")
    server.start()
    yield server
    server.stop()


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
    pytester.makepyfile(f"SCRIPT = {str(SCRIPT)!r}\n{GRPC_TESTS}")
    result = pytester.runpytest_subprocess("--netbench", "--netbench-json=out.json")
    result.stdout.fnmatch_lines(["*a gRPC method is '/package.Service/Method', got 'Say'*"])
    result.assert_outcomes(passed=2, failed=1)
    records = json.loads((pytester.path / "out.json").read_text())
    codes = {
        r["function"].rpartition("::")[2]: r["result"]["status_codes"] for r in records["records"]
    }
    assert codes == {"test_say": {"0": 100}, "test_fail": {"5": 10}}
