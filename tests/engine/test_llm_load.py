"""LLM loads (``llm_load``, ``netbench llm``): OpenAI-compatible token streams made from a
model, prompts and max_tokens, against the catalog's Go endpoint, which streams exactly
the max_tokens each body asks for, so the output tokens prove every body was sent."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netbench import SpecError, llm_load
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server


@pytest.fixture(scope="module")
def go_url() -> Iterator[str]:
    server = Server.from_spec(catalog.get("go")).start()
    try:
        yield server.url.rstrip("/")
    finally:
        server.stop()


PROMPTS = [
    "plain text",
    {"prompt": 'a "quoted" prompt', "max_tokens": 4},
    {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5},
]


def test_each_prompt_is_sent_with_its_max_tokens(go_url: str, loop: str) -> None:
    r = llm_load(
        f"{go_url}/v1/chat/completions?first_ms=3&every_ms=1", model="m", prompts=PROMPTS,
        max_tokens=3, requests=6, connections=2, loop=loop,  # type: ignore[arg-type]
    )  # fmt: skip
    assert (r.ok, r.errors_total) == (6, 0), r.error_samples
    s = r.stream
    assert s is not None and s.mode == "openai"
    assert s.output_tokens == 2 * (3 + 4 + 5)
    assert (s.events_per_stream.min, s.events_per_stream.max) == (3, 5)
    assert s.tpot.count == 6 and s.ttft.count == 6


def test_netbench_llm_reads_a_prompts_file(go_url: str, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('"one"\n\n{"prompt": "two", "max_tokens": 7}\n')
    out = tmp_path / "r.json"
    command = [
        sys.executable, "-m", "pytest_netbench.cli", "llm",
        f"{go_url}/v1/completions?first_ms=2&every_ms=1", "--model", "m", "--prompts",
        str(prompts), "--max-tokens", "2", "-n", "4", "-c", "1", "--json", str(out),
        "--goodput", "ttft:1000",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["ok"] == 4 and result["stream"]["output_tokens"] == 2 * (2 + 7)
    assert result["stream"]["good_streams"] == 4
    assert "TTFT" in done.stdout and "goodput:" in done.stdout


@pytest.mark.parametrize(
    ("url_path", "kwargs", "words"),
    [
        ("/v1/completions", {"model": ""}, "model= is the served model's name"),
        ("/v1/completions", {"prompts": [{"messages": [{"role": "user"}]}]},
         r"prompts\[0\]: messages are a chat's"),
        ("/v1/completions", {"prompts": [{"prompt": "x", "max_tokens": 0}]},
         r"prompts\[0\]: max_tokens is a whole number of tokens >= 1"),
        ("/v1/completions", {"prompts": [{"text": "x"}]}, "no field 'text'"),
        ("/v1/completions", {"prompts": [{"prompt": "x", "messages": []}]}, "one of the two"),
        ("/v1/completions", {"prompts": [3]}, "a prompt is a string"),
        ("/v1/completions", {"method": "GET"}, "an LLM load takes no method="),
        ("/v1/completions", {"pipeline": 2}, "takes no pipeline=: a token stream is read whole"),
        ("/v1/completions", {"mix_order": "random"}, "takes no mix_order=: one endpoint"),
        ("/v1/completions", {"prompts": []}, "no prompt in it"),
        ("/v1/completions", {"api": "rest"}, "api= is 'chat' or 'completions'"),
        ("/v1/completions", {"prompt": "x"}, "takes no prompt=: did you mean prompts="),
        ("/v1/completions", {"max_token": 3}, "did you mean max_tokens="),
        ("/v1/completions", {"extra": {"model": "x"}}, "extra= may not set 'model'"),
        ("/v1/completions", {"extra": {"seed": object()}}, "extra= must be JSON values"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(url_path: str, kwargs: dict[str, object], words: str) -> None:
    options: dict[str, object] = {"model": "m", **kwargs}
    with pytest.raises(SpecError, match=words):
        llm_load(f"http://127.0.0.1:1{url_path}", **options)  # type: ignore[arg-type]


def test_a_prompts_file_line_that_is_not_json_is_named(tmp_path: Path) -> None:
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('"fine"\n{not json\n')
    with pytest.raises(SpecError, match=r"p.jsonl line 2: not JSON"):
        llm_load("http://127.0.0.1:1/v1/completions", model="m", prompts=prompts)
    with pytest.raises(SpecError, match="cannot read the prompts file"):
        llm_load("http://127.0.0.1:1/v1/completions", model="m", prompts=tmp_path / "none")
