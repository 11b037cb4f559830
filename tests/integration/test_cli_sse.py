"""``netbench sse URL`` and ``netbench llm URL``, run as real subprocesses against the
catalog's Go server: the Streams section, the JSON's ``stream`` and a threshold on a stream
figure; each prompt of a file sent in turn as valid JSON; bad options in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import load_json, netbench

from pytest_netbench import LoadResult, Server, ToolchainMissing, catalog
from pytest_netbench.cli import ExitCode


@pytest.fixture(scope="module")
def go() -> Iterator[Server]:
    try:
        spec = catalog.get("go")
    except ToolchainMissing as exc:
        pytest.skip(f"go cannot run here: {exc}")
    server = Server.from_spec(spec).start()
    try:
        yield server
    finally:
        server.stop()


def test_sse_reports_the_streams_and_checks_a_threshold(go: Server, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    url = f"{go.url.rstrip('/')}/sse?first_ms=20&every_ms=5&events=8&end=%5BDONE%5D"
    done = netbench(
        "sse", url, "-c", "4", "-n", "12", "--stream-events", "8", "--stream-end", "[DONE]",
        "--threshold", "stream.first_event.p50_ms<10000", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "Streams (server-sent events): 12 streams, 96 events," in done.stdout
    for row in ("first byte", "first event", "gap", "whole"):
        assert f"\n  {row} " in done.stdout
    assert "events a stream: min 8, p50 8, mean 8.0, max 8" in done.stdout
    assert "ok      stream.first_event.p50_ms < 10000" in done.stdout
    data = load_json(out)
    assert data["stream"]["events"] == 96 and data["stream"]["mode"] == "sse"
    again = LoadResult.from_dict(data).stream
    assert again is not None and again.gap.count == 12 * 7
    assert again.percentile("first_event", 50) == again.first_event.p50_ms


def test_a_stream_check_without_a_stream_is_refused_in_one_line() -> None:
    done = netbench("http", "http://127.0.0.1:9/", "--stream-end", "[DONE]")
    assert done.returncode == ExitCode.USAGE
    (line,) = done.stderr.splitlines()
    assert "stream_events and stream_end check a stream: pass stream='sse'" in line


PROMPTS = (
    '"Hello there"\n'
    '{"prompt": "Say \\"hi\\"\\nplease", "max_tokens": 4}\n'
    "\n"
    '{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "é?"}]}\n'
)


def test_llm_sends_each_prompt_in_turn_and_times_its_tokens(go: Server, tmp_path: Path) -> None:
    # The catalog's OpenAI-compatible endpoint streams max_tokens tokens a request, with the
    # usage: the prompts ask 8, 4, 8, so six requests stream 8+4+8+8+4+8 tokens.
    prompts, out = tmp_path / "prompts.jsonl", tmp_path / "result.json"
    prompts.write_text(PROMPTS, encoding="utf-8")
    url = f"{go.url.rstrip('/')}/v1/chat/completions?first_ms=20&every_ms=4"
    shown = netbench("llm", url, "--model", "tiny", "--prompts", str(prompts), "--max-tokens",
                     "8", "--extra", '{"temperature": 0}', "--show-requests", "3")  # fmt: skip
    assert shown.returncode == ExitCode.OK, shown.stderr
    bodies = [line for line in shown.stdout.splitlines() if line.startswith("{")]
    assert [json.loads(body) for body in bodies] == [
        {"model": "tiny", "messages": [{"role": "user", "content": "Hello there"}],
         "max_tokens": 8, "stream": True, "stream_options": {"include_usage": True},
         "temperature": 0},
        {"model": "tiny", "messages": [{"role": "user", "content": 'Say "hi"\nplease'}],
         "max_tokens": 4, "stream": True, "stream_options": {"include_usage": True},
         "temperature": 0},
        {"model": "tiny", "messages": [{"role": "system", "content": "be brief"},
                                       {"role": "user", "content": "é?"}],
         "max_tokens": 8, "stream": True, "stream_options": {"include_usage": True},
         "temperature": 0},
    ]  # fmt: skip
    assert "POST /v1/chat/completions" in shown.stdout
    assert "Content-Type: application/json" in shown.stdout
    done = netbench("llm", url, "--model", "tiny", "--prompts", str(prompts), "--max-tokens", "8",
                    "-c", "1", "-n", "6", "--json", str(out))  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "Streams (OpenAI-compatible token streams): 6 streams, 40 events," in done.stdout
    assert "events a stream: min 4, p50 8, mean 6.7, max 8" in done.stdout
    stream = load_json(out)["stream"]
    assert (stream["mode"], stream["output_tokens"]) == ("openai", 40)


@pytest.mark.parametrize(
    ("line", "args", "says"),
    [
        ("{not json", (), "line 1: not JSON"),
        ('{"text": "hi"}', (), "no field 'text'"),
        ('{"prompt": 3}', (), "the prompt is text, got 3"),
        ('{"messages": [{"role": "user", "content": "x"}]}', ("--api", "completions"),
         "messages are a chat's, and the URL is a completions endpoint"),
        ('"hi"', ("--extra", "[1]"), "--extra: a JSON object"),
        ('"hi"', ("--extra", '{"stream": false}'), "extra= may not set 'stream'"),
        ('"hi"', ("--max-tokens", "0"), "max_tokens= is a whole number of tokens >= 1"),
    ],
)  # fmt: skip
def test_llm_refuses_bad_prompts_in_one_line(
    tmp_path: Path, line: str, args: tuple[str, ...], says: str
) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(line + "\n")
    done = netbench("llm", "http://127.0.0.1:9/v1/chat/completions", "--model", "m",
                    "--prompts", str(prompts), *args)  # fmt: skip
    assert done.returncode == ExitCode.USAGE
    (message,) = done.stderr.splitlines()
    assert says in message
