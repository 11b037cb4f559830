"""``netbench llm URL --model M --prompts FILE``: token streams of an OpenAI-compatible LLM
server, each request a prompt of FILE, timed as vLLM's ``vllm bench serve`` times them.

A front over ``netbench sse --stream openai``: it writes each prompt's request body (the
model, the prompt as a chat message or a completion prompt, ``max_tokens``, ``stream``
with ``include_usage``) once, before the load, into a JSON-lines file of bodies that a
feeder sends in turn, so a prompt with quotes or line breaks is sent as valid JSON and the
engine renders nothing per request but the body it is handed.
"""

from __future__ import annotations

import argparse
import json
import urllib.parse
from pathlib import Path
from typing import Any

from pytest_netbench._errors import SpecError

# The HTTP load options this command sets itself (the rest are netbench http's).
LLM_SETS = frozenset({"method", "body", "mix", "mix_order", "stream", "feeders", "pipeline"})
DEFAULT_PROMPT = "Write a short story about a load generator."
DEFAULT_MAX_TOKENS = 128
_PROMPT_KEYS = ("prompt", "messages", "max_tokens")


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Token streams of an OpenAI-compatible LLM server (vLLM, SGLang, TGI, llama.cpp,"
        " Ollama) at URL (.../v1/chat/completions or .../v1/completions): each request a"
        " prompt of --prompts, streamed, timed as vLLM's benchmark times it (TTFT, ITL,"
        " TPOT, E2EL, output tokens). Every option of netbench sse but those this command"
        " sets (method, body, stream)."
    )
    parser.add_argument("url", help="http:// or https:// URL on loopback")
    llm = parser.add_argument_group("LLM")
    llm.add_argument("--model", required=True, help="the model name each request asks for")
    llm.add_argument(
        "--prompts",
        type=Path,
        metavar="FILE",
        help="JSON lines, one request each, sent in turn (then again from the first): a"
        ' string (the prompt), or an object with "prompt" (text) or "messages" (a chat'
        ' list), and "max_tokens" if its own; other keys are ignored. Default: one prompt',
    )
    llm.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help="output tokens each request asks for, where its line gives none"
        f" [{DEFAULT_MAX_TOKENS}]",
    )
    llm.add_argument(
        "--api",
        choices=("chat", "completions"),
        help="the request's shape: chat (messages) or completions (prompt); default: from"
        " the URL's path, chat unless it ends in /completions without /chat",
    )
    llm.add_argument(
        "--extra",
        metavar="JSON",
        help='a JSON object merged into every body, e.g. \'{"temperature": 0, "ignore_eos":'
        " true}'",
    )


def api_of(url: str, given: str | None) -> str:
    if given is not None:
        return given
    path = urllib.parse.urlsplit(url).path.rstrip("/")
    return "completions" if path.endswith("/completions") and "/chat" not in path else "chat"


def read_prompts(path: Path) -> list[dict[str, Any]]:
    """The prompts of ``path``, each as an object with ``prompt`` or ``messages``; a line
    that is none of the shapes is an error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"--prompts: cannot read {path}: {exc}") from None
    prompts: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"--prompts {path}, line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SpecError(f"{where}: not JSON ({exc.msg}): {_SHAPES}") from None
        prompts.append(_prompt_of(value, where))
    if not prompts:
        raise SpecError(f"--prompts {path}: no prompt in it: {_SHAPES}")
    return prompts


_SHAPES = 'write one JSON value a line: a string, or {"prompt": ...} or {"messages": [...]}'


def _prompt_of(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        return {"prompt": value}
    if not isinstance(value, dict) or not ("prompt" in value or "messages" in value):
        raise SpecError(f"{where}: {_SHAPES}")
    if "prompt" in value and not isinstance(value["prompt"], str):
        raise SpecError(f'{where}: "prompt" is text, got {type(value["prompt"]).__name__}')
    if "messages" in value and not isinstance(value["messages"], list):
        raise SpecError(f'{where}: "messages" is a list of {{"role": ..., "content": ...}}')
    tokens = value.get("max_tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)):
        raise SpecError(f'{where}: "max_tokens" is a whole number, got {tokens!r}')
    return {key: value[key] for key in _PROMPT_KEYS if key in value}


def request_body(
    prompt: dict[str, Any], *, model: str, api: str, max_tokens: int, extra: dict[str, Any]
) -> dict[str, Any]:
    """One request's body, as vLLM's benchmark sends it (``stream_options.include_usage``:
    the server counts the output tokens)."""
    body: dict[str, Any] = {"model": model}
    if api == "chat":
        messages = prompt.get("messages") or [{"role": "user", "content": prompt["prompt"]}]
        body["messages"] = messages
    elif "prompt" in prompt:
        body["prompt"] = prompt["prompt"]
    else:
        raise SpecError(
            'a prompt given as "messages" needs the chat API: give a .../v1/chat/completions'
            " URL or --api chat"
        )
    body["max_tokens"] = prompt.get("max_tokens", max_tokens)
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return {**body, **extra}


def llm_options(args: argparse.Namespace, options: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """``options`` (the HTTP load's, from the command line) with the request this command
    makes: a POST of each prompt's body in turn, read as an OpenAI-compatible stream. The
    bodies are written to ``scratch``, which must outlive the load."""
    from pytest_netbench._model import feeders

    if args.max_tokens < 1:
        raise SpecError(
            f"--max-tokens takes how many tokens to ask for (>= 1), got {args.max_tokens}"
        )
    extra: dict[str, Any] = {}
    if args.extra is not None:
        try:
            extra = json.loads(args.extra)
        except json.JSONDecodeError as exc:
            raise SpecError(f"--extra: not JSON ({exc.msg}): {args.extra!r}") from None
        if not isinstance(extra, dict):
            raise SpecError(
                f"--extra: a JSON object, e.g. '{{\"temperature\": 0}}', got {args.extra!r}"
            )
    api = api_of(args.url, args.api)
    prompts = (
        read_prompts(args.prompts) if args.prompts is not None else [{"prompt": DEFAULT_PROMPT}]
    )
    bodies = [
        json.dumps(
            request_body(p, model=args.model, api=api, max_tokens=args.max_tokens, extra=extra),
            ensure_ascii=False,
        )
        for p in prompts
    ]
    headers = list(options.get("headers") or ())
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("Content-Type", "application/json"))
    out = {**options, "method": "POST", "headers": headers, "stream": "openai"}
    if len(bodies) == 1:
        out["body"] = bodies[0].encode()
        return out
    file = scratch / "bodies.jsonl"
    file.write_text("\n".join(bodies) + "\n", encoding="utf-8")
    out["body"] = "${prompt}"
    out["feeders"] = {"prompt": feeders.jsonl(file)}
    return out
