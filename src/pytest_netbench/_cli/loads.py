"""``netbench http`` and ``netbench echo``: one load, reported as wrk and ab report theirs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytest_netbench._cli.live import CommandLive
from pytest_netbench._cli.options import http_kwargs, load_kwargs
from pytest_netbench._model import LoadResult

EXIT_INVALID = 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C


def run_load(args: argparse.Namespace) -> int:
    """Run the load the arguments ask for; print, write, and say how it ended."""
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        result = _run_http(args, live) if args.command == "http" else _run_echo(args, live)
        live.clear()
    if args.json is not None:
        write_json(args.json, result.to_dict())
    if not args.quiet:
        from pytest_netbench._report.summary import format_result

        text = format_result(result)
        if result.interrupted:
            text = f"{interrupted_banner(result)}\n{text}{interrupted_banner(result)}\n"
        print(text, end="")
    if result.interrupted:
        return EXIT_INTERRUPTED
    if args.fail_invalid and not result.valid:
        return EXIT_INVALID
    return 0


def interrupted_banner(result: LoadResult) -> str:
    spec = result.spec
    asked = ""
    if spec is not None and spec.duration_s is not None:
        asked = f" of the {spec.duration_s:g} s asked for"
    elif spec is not None and spec.requests is not None:
        asked = f" ({result.sent:,} of {spec.requests:,} requests sent)"
    return f"INTERRUPTED after {result.duration_s:.2f} s{asked}: figures for that time only."


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n")


def _run_http(args: argparse.Namespace, live: CommandLive) -> LoadResult:
    from pytest_netbench._api import http_load

    return http_load(args.url, progress=live.progress, stop=live.stop, **http_kwargs(args))


def _run_echo(args: argparse.Namespace, live: CommandLive) -> LoadResult:
    from pytest_netbench._api import echo_load
    from pytest_netbench._target import parse_host_port

    host, port = parse_host_port(args.target)
    return echo_load(
        host,
        port,
        payload_bytes=args.bytes,
        chunk=args.chunk,
        framing=args.framing,
        progress=live.progress,
        stop=live.stop,
        **load_kwargs(args),
    )
