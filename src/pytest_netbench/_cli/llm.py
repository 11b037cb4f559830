"""``netbench llm URL --model M --prompts FILE``: token streams of an OpenAI-compatible LLM
server, each request a prompt of FILE, timed as vLLM's ``vllm bench serve`` times them.

A front over :func:`~pytest_netbench._load.api.llm_load` (whose ``_input.llm`` makes and
checks the bodies): this module describes the command and reads its own options, whose
flags ``_cli.options`` makes from the rows of ``_input.options.LLM_OPTIONS``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._input.llm import SET_BY_LLM_LOAD
from pytest_netbench._input.options import LLM_OPTIONS

# The HTTP load options this command sets itself (the rest are netbench http's).
LLM_SETS = frozenset(SET_BY_LLM_LOAD)


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Token streams of an OpenAI-compatible LLM server (vLLM, SGLang, TGI, llama.cpp,"
        " Ollama) at URL (.../v1/chat/completions or .../v1/completions): each request a"
        " prompt of --prompts, streamed, timed as vLLM's benchmark times it (TTFT, ITL,"
        " TPOT, E2EL, output tokens). Every option of netbench sse but those this command"
        f" sets itself ({', '.join(SET_BY_LLM_LOAD)})."
    )
    parser.add_argument("url", help="http:// or https:// URL on loopback")


def llm_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The command's own options the user gave, as ``llm_load`` takes them (the rest take
    its defaults)."""
    given = {
        option.name: getattr(args, option.name)
        for option in LLM_OPTIONS
        if getattr(args, option.name) is not None
    }
    if "extra" in given:
        try:
            extra = json.loads(args.extra)
        except json.JSONDecodeError as exc:
            raise SpecError(f"--extra: not JSON ({exc.msg}): {args.extra!r}") from None
        if not isinstance(extra, dict):
            raise SpecError(
                f"--extra: a JSON object, e.g. '{{\"temperature\": 0}}', got {args.extra!r}"
            )
        given["extra"] = extra
    return given
