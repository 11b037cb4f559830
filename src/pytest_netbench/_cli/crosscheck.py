"""``netbench crosscheck URL --tool wrk|ab``: one load measured by netbench, then by wrk or
ab, printed side by side with the ratio of each figure."""

from __future__ import annotations

import argparse
from typing import Any

from pytest_netbench._cli.loads import write_json
from pytest_netbench._cli.options import given


def run_crosscheck(args: argparse.Namespace) -> int:
    from pytest_netbench._experiment.crosscheck import crosscheck
    from pytest_netbench._report.crosscheck import format_crosscheck

    options: dict[str, Any] = given(
        connections=args.connections,
        duration=args.duration,
        requests=args.requests,
        timeout=args.timeout,
        workers=args.workers,
        loop=args.loop,
        retries=args.retries,
    )
    result = crosscheck(
        args.url,
        tool=args.tool,
        headers=args.header,
        keepalive=not args.no_keepalive,
        allow_remote=args.allow_remote,
        **options,
    )
    if args.json is not None:
        write_json(args.json, result.to_dict())
    if not args.quiet:
        print(format_crosscheck(result), end="")
    return 0
