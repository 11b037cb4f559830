"""``netbench flow MODULE:FUNCTION URL -u 50 -d 30s``: virtual users running a user flow.

The flow is imported and every flag checked before any socket; Ctrl-C stops the load and
prints what was measured (as ``netbench http``). The report is the load's, steps as its
per-request rows, with the sessions beneath.
"""

from __future__ import annotations

import argparse
import sys
import traceback

from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._cli.live import CommandLive
from pytest_netbench._cli.loads import load_status, print_report
from pytest_netbench._cli.options import load_options
from pytest_netbench._cli.outputs import write_files
from pytest_netbench._errors import FlowError, FlowTraceback


def run_flow(args: argparse.Namespace) -> ExitCode:
    from pytest_netbench._experiment.slo import parse_slo
    from pytest_netbench._flow.api import flow_spec, run_flow_spec
    from pytest_netbench._flow.reference import load_flows
    from pytest_netbench._report.sessions import format_sessions
    from pytest_netbench._report.summary import format_result

    flow_function = load_flows(args.flow)
    options = load_options(args, "http")
    spec, sessions = flow_spec(
        args.url,
        users=args.users,
        sessions=args.sessions,
        max_users=args.max_users,
        **options,
    )
    thresholds = (
        parse_slo(" and ".join(args.threshold), what="threshold") if args.threshold else None
    )
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        try:
            result = run_flow_spec(
                flow_function,
                spec,
                sessions,
                progress=live.progress,
                stop=live.stop,
                client=args.client,
                cluster=args.cluster,
            )
        except FlowError as exc:
            # The flow's own traceback, which the error's message points to.
            if isinstance(exc.__cause__, FlowTraceback):  # printed by a worker
                print(exc.__cause__, file=sys.stderr)
            elif exc.__cause__ is not None:
                traceback.print_exception(exc.__cause__, file=sys.stderr)
            raise
        live.clear()
    verdict = thresholds.evaluate(result) if thresholds is not None else None
    unwritten = write_files(args, result, stem="flow")
    if not args.quiet:
        text = format_result(result, thresholds=verdict)
        if result.sessions is not None:
            text += format_sessions(result.sessions)
        print_report(result, text)
    if unwritten is not None:
        return unwritten
    return load_status(result, verdict, fail_invalid=args.fail_invalid)
