"""The requests of an LLM load (``llm_load``, ``netbench llm``): OpenAI-compatible streaming
completion or chat bodies made from a model name, prompts and ``max_tokens``, checked before
any socket.

A prompt is a string, or an object with ``prompt`` (text) or ``messages`` (a chat's list)
and, if it likes, its own ``max_tokens``; a file of them is JSON lines, one a line (blank
lines skipped). Each body asks for a stream with its usage (``"stream": true``,
``"stream_options": {"include_usage": true}``), as vLLM's ``vllm bench serve`` sends it,
so the output tokens are the server's count. A chat endpoint (a path ending in
``/chat/completions``) takes ``messages`` (a prompt becomes one user message); a
completions endpoint takes ``prompt`` only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._public import publish

PromptsArg = str | os.PathLike[str] | Sequence[str | dict[str, Any]] | None
# The prompt of a load given none.
DEFAULT_PROMPT = "Hello"
# The request shapes ``api=`` names.
LLM_APIS = ("chat", "completions")


def is_chat_path(path: str) -> bool:
    """Whether an endpoint's path is a chat completion's (``/v1/chat/completions``)."""
    return path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")


def api_is_chat(api: object, url_path: str) -> bool:
    """Whether the bodies are a chat's: ``api="chat"`` or ``"completions"`` as given, else
    (``None``) from the endpoint's path."""
    if api is None:
        return is_chat_path(url_path)
    if api not in LLM_APIS:
        raise SpecError(f"api= is 'chat' or 'completions' (None: from the URL), got {api!r}")
    return api == "chat"


# The HTTP options an LLM load sets itself, and why: the library refuses them by name and
# `netbench llm` has no flag for them.
SET_BY_LLM_LOAD: dict[str, str] = {
    "method": "an LLM load POSTs each request",
    "body": "the bodies are made from model=, prompts= and max_tokens=",
    "stream": "an LLM load reads OpenAI-compatible token streams (stream='openai')",
    "stream_end": "a token stream ends with data: [DONE]",
    "mix": "one endpoint per LLM load",
    "mix_order": "one endpoint per LLM load",
    "feeders": "the prompts are its feeder: prompts=",
    "pipeline": "a token stream is read whole before its connection's next request",
}

# What a body's own fields are: ``extra=`` may not replace them.
_SET_BY_THE_LOAD = ("model", "prompt", "messages", "max_tokens", "stream", "stream_options")


def llm_bodies(
    model: object,
    prompts: PromptsArg,
    max_tokens: object,
    *,
    chat: bool,
    extra: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One request body per prompt (see the module), with ``extra``'s fields (a sampling
    setting such as ``{"temperature": 0, "ignore_eos": true}``) in each; a SpecError names
    what is wrong and where (the file's line, or the list's index)."""
    if not isinstance(model, str) or not model.strip():
        raise SpecError(f"model= is the served model's name (CLI --model M), got {model!r}")
    default = _checked_max_tokens(max_tokens, "max_tokens=")
    extra = _checked_extra(extra)
    items: list[tuple[str, object]]
    if prompts is None:
        items = [("the default prompt", DEFAULT_PROMPT)]
    elif isinstance(prompts, str | os.PathLike):
        items = _read_lines(Path(prompts))
    elif isinstance(prompts, Sequence):
        items = [(f"prompts[{i}]", p) for i, p in enumerate(prompts)]
    else:
        raise SpecError(
            f"prompts= is a JSON-lines file's path or a list of prompts, got"
            f" {type(prompts).__name__}"
        )
    if not items:
        raise SpecError(f"{prompts}: no prompt in it (one JSON value a line)")
    return [{**_body(model, where, item, default, chat), **extra} for where, item in items]


def _checked_extra(extra: object) -> dict[str, Any]:
    if extra is None:
        return {}
    if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
        raise SpecError(
            f'extra= is a mapping of body fields, e.g. {{"temperature": 0}}, got {extra!r}'
        )
    taken = [key for key in _SET_BY_THE_LOAD if key in extra]
    if taken:
        raise SpecError(
            f"extra= may not set {taken[0]!r}: the load sets it (model=, prompts=,"
            " max_tokens=; every body streams with its usage)"
        )
    try:
        json.dumps(dict(extra))
    except (TypeError, ValueError) as exc:
        raise SpecError(f"extra= must be JSON values: {exc}") from None
    return dict(extra)


def _read_lines(path: Path) -> list[tuple[str, object]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the prompts file {path}: {exc}") from None
    items: list[tuple[str, object]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            items.append((where, json.loads(line)))
        except ValueError as exc:
            raise SpecError(
                f"{where}: not JSON ({exc.args[0] if exc.args else exc}); a line is a prompt"
                ' as a JSON string, or {"prompt": ...} or {"messages": [...]}'
            ) from None
    return items


def _body(model: str, where: str, item: object, default: int, chat: bool) -> dict[str, Any]:
    max_tokens = default
    if isinstance(item, str):
        prompt: object = item
        messages: object = None
    elif isinstance(item, dict):
        unknown = sorted(set(item) - {"prompt", "messages", "max_tokens"})
        if unknown:
            raise SpecError(
                f"{where}: no field {unknown[0]!r} (a prompt has prompt or messages, and"
                " max_tokens if it likes)"
            )
        prompt, messages = item.get("prompt"), item.get("messages")
        if "max_tokens" in item:
            max_tokens = _checked_max_tokens(item["max_tokens"], f"{where}: max_tokens")
    else:
        raise SpecError(
            f'{where}: a prompt is a string, or {{"prompt": ...}} or {{"messages": [...]}},'
            f" got {item!r}"
        )
    if (prompt is None) == (messages is None):
        raise SpecError(f"{where}: give a prompt's text or its messages, one of the two")
    if prompt is not None and not isinstance(prompt, str):
        raise SpecError(f"{where}: the prompt is text, got {prompt!r}")
    if messages is not None and (not isinstance(messages, list) or not messages):
        raise SpecError(f"{where}: messages is a chat's non-empty list, got {messages!r}")
    body: dict[str, Any] = {"model": model}
    if chat:
        body["messages"] = messages if messages is not None else [
            {"role": "user", "content": prompt}
        ]  # fmt: skip
    elif messages is not None:
        raise SpecError(
            f"{where}: messages are a chat's, and the URL is a completions endpoint: use"
            " .../v1/chat/completions, or give the prompt's text"
        )
    else:
        body["prompt"] = prompt
    body.update(
        {"max_tokens": max_tokens, "stream": True, "stream_options": {"include_usage": True}}
    )
    return body


def _checked_max_tokens(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(f"{what} is a whole number of tokens >= 1, got {value!r}")
    return value


publish(globals())
