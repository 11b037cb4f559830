"""``netbench http URL --show-requests N``: the first N requests of the load, rendered from
its feeders and printed; nothing is sent (as ``k6 inspect`` shows a script's options)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._errors import SpecError


def show_requests(args: argparse.Namespace, options: dict[str, Any]) -> ExitCode:
    from pytest_netbench._input.spec import http_spec
    from pytest_netbench._proto.source import preview
    from pytest_netbench._report.request_preview import closing_line, format_requests

    asked = args.show_requests
    if asked < 1:
        raise SpecError(f"--show-requests takes how many requests to show (>= 1), got {asked}")
    if args.command == "llm":
        from pytest_netbench._cli.llm import llm_arguments
        from pytest_netbench._load.api import llm_spec

        # The bodies' file lives as long as the spec: render inside the with.
        with llm_spec(args.url, **llm_arguments(args), **options) as spec:
            shown = preview(spec, asked)
    else:
        spec = http_spec(args.url, **options)  # every check of the load, before rendering
        shown = preview(spec, asked)
    print(format_requests(shown, asked=asked, workers=spec.workers), end="")
    print(closing_line(len(shown), asked=asked), file=sys.stderr)
    return ExitCode.OK
