"""End-to-end: ``netbench.llm(...)`` in a test against the catalog's Go server: the token
figures in the test and in the stored record; a bad prompt fails the test with the
library's one line."""

from __future__ import annotations

import json

import pytest

LLM_TESTS = """
import pytest


@pytest.fixture
def llm_server(netbench_server):
    return netbench_server("go")


def test_tokens(netbench, llm_server):
    url = llm_server.url.rstrip("/") + "/v1/completions?first_ms=3&every_ms=1"
    r = netbench.llm(url, server=llm_server, model="m", prompts=["a", {"prompt": "b",
                     "max_tokens": 6}], max_tokens=4, connections=1, requests=4,
                     goodput="ttft:1000")
    assert (r.ok, r.errors_total) == (4, 0)
    assert r.stream.output_tokens == 2 * (4 + 6) and r.stream.good_streams == 4


def test_bad_prompt(netbench, llm_server):
    netbench.llm(llm_server.url, model="m", prompts=[{"text": "x"}], requests=1)
"""


def test_an_llm_load_is_recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(LLM_TESTS)
    result = pytester.runpytest_subprocess("--netbench", "--netbench-json=out.json")
    result.stdout.fnmatch_lines(["*prompts[[]0[]]: no field 'text'*"])
    result.assert_outcomes(passed=1, failed=1)
    records = json.loads((pytester.path / "out.json").read_text())
    [record] = [r for r in records["records"] if r["function"].endswith("test_tokens")]
    stream = record["result"]["stream"]
    assert (stream["mode"], stream["streams"], stream["output_tokens"]) == ("openai", 4, 20)
