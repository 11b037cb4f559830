"""End-to-end: ``netbench.sse(...)`` in a test against the catalog's Starlette server
(issue 32): the stream figures in the test and in the stored record; a threshold on a
stream figure; a bad option fails the test with the library's one line."""

from __future__ import annotations

import importlib.util
import json

import pytest

SSE_TESTS = """
import pytest


@pytest.fixture
def streaming(netbench_server):
    return netbench_server("starlette")


def test_tokens(netbench, streaming):
    url = streaming.url.rstrip("/") + "/sse?first_ms=20&every_ms=5&events=10&end=%5BDONE%5D"
    r = netbench.sse(url, server=streaming, connections=2, requests=6, stream_end="[DONE]")
    assert (r.ok, r.errors_total) == (6, 0)
    assert r.stream.events == 60 and r.stream.first_event.p50_ms >= 20


def test_bad_option(netbench, streaming):
    netbench.sse(streaming.url, stream="tokens", requests=1)
"""


def test_an_sse_load_is_recorded(pytester: pytest.Pytester) -> None:
    if importlib.util.find_spec("starlette") is None:
        pytest.skip("starlette is not installed")
    pytester.makepyfile(SSE_TESTS)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-json=out.json", "--netbench-markdown=out.md"
    )
    result.stdout.fnmatch_lines(["*stream must be 'sse' (server-sent events), 'chunks'*"])
    # Under the test's matrix, its stream figures (terminal and Markdown).
    result.stdout.fnmatch_lines(
        [
            "  streams (ms): each load's stream figures*",
            "  load * streams * events/s * first event p50 * first event p99 * gap p50 * gap p99",
            "  (one load) * 6 *",
        ]
    )
    markdown = (pytester.path / "out.md").read_text()
    assert "#### Streams" in markdown and "| first event p50 |" in markdown
    result.assert_outcomes(passed=1, failed=1)
    records = json.loads((pytester.path / "out.json").read_text())
    [record] = [r for r in records["records"] if r["function"].endswith("test_tokens")]
    stream = record["result"]["stream"]
    assert (stream["mode"], stream["streams"], stream["events"]) == ("sse", 6, 60)
    assert record["result"]["server"] is not None  # the managed server was sampled
