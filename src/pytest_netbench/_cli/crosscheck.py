"""``netbench crosscheck URL --tool wrk|ab``: one load measured by netbench, then by wrk or
ab, printed side by side with the ratio of each figure."""

from __future__ import annotations

import argparse

from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._cli.options import given, load_options
from pytest_netbench._cli.outputs import write_files


def run_crosscheck(args: argparse.Namespace) -> ExitCode:
    from pytest_netbench._experiment.crosscheck import crosscheck
    from pytest_netbench._report.crosscheck import format_crosscheck
    from pytest_netbench._report.summary import no_success_line

    result = crosscheck(
        args.url,
        tool=args.tool,
        bracket=args.bracket,
        **given(retries=args.retries),
        **load_options(args, "http"),
    )
    unwritten = write_files(args, result)
    nothing = result.netbench.ok == 0
    if not args.quiet:
        print(format_crosscheck(result), end="")
        if nothing:
            print(f"\n{no_success_line(result.netbench)} (netbench's run)")
    if unwritten is not None:
        return unwritten
    return ExitCode.NO_SUCCESS if nothing else ExitCode.OK
