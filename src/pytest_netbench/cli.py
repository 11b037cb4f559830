"""The ``netbench`` command: ``http``, ``echo``, ``ws``, ``flow``, ``sweep``, ``capacity``,
``cold-start``, ``crosscheck``, ``compare`` and ``servers``, in the spirit of wrk, ab and
autobench. The parts are in :mod:`pytest_netbench._cli`.

Its exit statuses are the members of :class:`ExitCode` (:mod:`pytest_netbench._cli.exit_codes`),
tabled in docs/cli.md and at the end of ``netbench --help``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_netbench._cli.compare import run_compare
from pytest_netbench._cli.crosscheck import run_crosscheck
from pytest_netbench._cli.exit_codes import ExitCode, exit_status_help
from pytest_netbench._cli.experiments import run_capacity, run_cold_start, run_sweep
from pytest_netbench._cli.flow import run_flow
from pytest_netbench._cli.loads import run_load
from pytest_netbench._cli.options import build_parser
from pytest_netbench._cli.scenarios import run_scenarios_command
from pytest_netbench._errors import NetbenchError, SpecError, TargetUnreachableError

__all__ = ["ExitCode", "main"]


class _HelpFormatter(argparse.HelpFormatter):
    """The description wrapped as argparse wraps it; the exit-status table as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("exit status:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def main(argv: Sequence[str] | None = None) -> ExitCode:
    parser = build_parser()
    parser.epilog = exit_status_help()
    parser.formatter_class = _HelpFormatter
    args = parser.parse_args(argv)
    if args.command == "servers":
        from pytest_netbench._servers.catalog import listing

        print(listing(app=args.app))
        return ExitCode.OK
    experiments = {
        "sweep": run_sweep,
        "capacity": run_capacity,
        "cold-start": run_cold_start,
        "crosscheck": run_crosscheck,
        "compare": run_compare,
        "flow": run_flow,
        "scenarios": run_scenarios_command,
    }
    run = experiments.get(args.command, run_load)
    try:
        return run(args)
    except SpecError as exc:
        parser.exit(ExitCode.USAGE, f"netbench {args.command}: error: {exc}\n")
    except TargetUnreachableError as exc:
        print(f"netbench: {exc}", file=sys.stderr)
        return ExitCode.UNREACHABLE
    except NetbenchError as exc:
        print(f"netbench: {exc}", file=sys.stderr)
        return ExitCode.REFUSED
    except KeyboardInterrupt:
        # A second Ctrl-C (the first stops the run cleanly), or one with no run to stop.
        print("netbench: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
