"""``netbench llm URL --model M --prompts FILE``: token streams of an OpenAI-compatible LLM
server, each request a prompt of FILE, timed as vLLM's ``vllm bench serve`` times them.

A front over :func:`~pytest_netbench._load.api.llm_load` (whose ``_input.llm`` makes and
checks the bodies): this module adds the command's options and reads them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytest_netbench._errors import SpecError

# The HTTP load options this command sets itself (the rest are netbench http's).
LLM_SETS = frozenset(
    {"method", "body", "mix", "mix_order", "stream", "stream_end", "feeders", "pipeline"}
)
DEFAULT_MAX_TOKENS = 128


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
        ' list), and "max_tokens" if its own. Default: one prompt',
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
        " the URL's path (chat for .../chat/completions)",
    )
    llm.add_argument(
        "--extra",
        metavar="JSON",
        help='a JSON object merged into every body, e.g. \'{"temperature": 0, "ignore_eos":'
        " true}'",
    )


def llm_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The command's own options, as ``llm_load`` takes them."""
    extra: Any = None
    if args.extra is not None:
        try:
            extra = json.loads(args.extra)
        except json.JSONDecodeError as exc:
            raise SpecError(f"--extra: not JSON ({exc.msg}): {args.extra!r}") from None
        if not isinstance(extra, dict):
            raise SpecError(
                f"--extra: a JSON object, e.g. '{{\"temperature\": 0}}', got {args.extra!r}"
            )
    return {
        "model": args.model,
        "prompts": args.prompts,
        "max_tokens": args.max_tokens,
        "api": args.api,
        "extra": extra,
    }
