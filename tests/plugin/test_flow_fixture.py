"""End-to-end: ``netbench.flow(...)`` in a test, recorded like a load (issue 21).

The flow runs against the hello server (a real subprocess on loopback); its steps are the
result's per-request figures, so they are matrix columns like a mix's, and bad arguments
fail the test with the library's message before any socket.
"""

from __future__ import annotations

import pytest

FLOW_TESTS = """
async def visitor(client):
    await client.get("/", extensions={"netbench_step": "home"})
    await client.get("/missing")


def test_flow(netbench, hello):
    srv = hello("--status-for", "/missing=404")
    r = netbench.flow(visitor, srv, users=2, sessions=10)
    assert r.by_request["home"].ok == 10
    assert r.by_request["GET /missing"].errors["status"] == 10
    assert r.sessions.completed == 10 and r.sessions.failed == 0
    assert r.sent == r.ok + r.errors_total + r.in_flight == 20


def test_bad_flow_arguments(netbench, hello):
    netbench.flow(visitor, hello(), users=0)


def test_a_failing_flow_test_shows_its_sessions(netbench, hello):
    netbench.flow(visitor, hello(), users=1, sessions=4)
    assert False, "to see the report section"
"""


def test_a_flow_is_recorded_with_its_steps_as_columns(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(FLOW_TESTS)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-metrics", "rps,by_request.home.ok", "--netbench-json=out.json"
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*netbench: users must be a whole number of at least 1, got 0*",
            "*netbench result:*",
            "Sessions (1 users)",
            "  started 4  completed 4  failed 0  in progress 0",
            "*::test_flow*",
            "*rps*by_request.home.ok*",
            "test_flow * 10",
        ]
    )
    import json

    records = json.loads((pytester.path / "out.json").read_text())
    text = json.dumps(records)
    assert '"sessions"' in text and '"completed": 10' in text
