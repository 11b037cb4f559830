"""``netbench http`` and ``netbench echo``: one load, reported as wrk and ab report theirs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_netbench._cli.live import CommandLive
from pytest_netbench._cli.options import http_kwargs, load_kwargs
from pytest_netbench._model import LoadResult

if TYPE_CHECKING:
    from pytest_netbench._experiment.capacity import CapacityResult
    from pytest_netbench._experiment.cold_start import ColdStartResult
    from pytest_netbench._experiment.sweep import SweepResult

EXIT_INVALID = 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C


def run_load(args: argparse.Namespace) -> int:
    """Run the load the arguments ask for; print, write, and say how it ended."""
    check_plot(args)
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        result = _run_http(args, live) if args.command == "http" else _run_echo(args, live)
        live.clear()
    if args.json is not None:
        write_json(args.json, result.to_dict())
    write_plots(args, result, stem=args.command)
    write_html(args, result)
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


def check_plot(args: argparse.Namespace) -> None:
    """With ``--plot``: fail before the load, not after it, when matplotlib is missing."""
    if getattr(args, "plot", None) is not None:
        from pytest_netbench._report.plots.canvas import require_matplotlib

        require_matplotlib()


def write_plots(
    args: argparse.Namespace,
    result: LoadResult | SweepResult | ColdStartResult | CapacityResult,
    stem: str = "",
) -> None:
    """With ``--plot DIR``: the result's pictures, and a line on stderr saying where."""
    if getattr(args, "plot", None) is None:
        return
    from pytest_netbench._report.plots.session import plot_result

    title = f"netbench {args.command} {getattr(args, 'url', getattr(args, 'target', ''))}"
    pictures = plot_result(args.plot, result, stem=stem, title=title)
    if not args.quiet:
        print(f"netbench: {len(pictures)} plot(s) drawn in {args.plot}", file=sys.stderr)


def write_html(
    args: argparse.Namespace,
    result: LoadResult | SweepResult | ColdStartResult | CapacityResult,
) -> None:
    """With ``--html PATH``: the result as one self-contained page, and a line saying where."""
    if getattr(args, "html", None) is None:
        return
    from pytest_netbench._report.html.results import write_results_html

    target = getattr(args, "url", getattr(args, "target", ""))
    path = write_results_html(args.html, result, name=f"netbench {args.command} {target}")
    if not args.quiet:
        print(f"netbench: HTML report written to {path}", file=sys.stderr)


def _run_http(args: argparse.Namespace, live: CommandLive) -> LoadResult:
    from pytest_netbench._api import http_load

    return http_load(
        args.url, progress=live.progress, stop=live.stop, cluster=args.cluster, **http_kwargs(args)
    )


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
        cluster=args.cluster,
        **load_kwargs(args),
    )
