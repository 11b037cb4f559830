"""The ``netbench`` command: ``http``, ``echo``, ``ws``, ``flow``, ``sweep``, ``capacity``,
``cold-start``, ``crosscheck``, ``compare`` and ``servers``, in the spirit of wrk, ab and
autobench. The parts are in :mod:`pytest_netbench._cli`.

Its exit statuses are the members of :class:`ExitCode` (:mod:`pytest_netbench._cli.exit_codes`),
tabled in docs/cli.md and at the end of ``netbench --help``.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from pytest_netbench._cli import collector
from pytest_netbench._cli.exit_codes import ExitCode, exit_status_help
from pytest_netbench._cli.options import build_parser, command_named
from pytest_netbench._errors import NetbenchError, SpecError, TargetUnreachableError

__all__ = ["ExitCode", "command", "main"]


class _HelpFormatter(argparse.HelpFormatter):
    """The description wrapped as argparse wraps it; the exit-status table as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("exit status:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def command() -> NoReturn:
    """``netbench`` as a process of its own (the console script): :func:`main`, with the
    garbage collector kept out of the start-up and the exit (:mod:`._cli.collector`;
    about 25 ms of a one-request load's CPU, issue 35). At exit everything is frozen, and
    the interpreter ends without walking it: objects in reference cycles left then are not
    finalized, as a process killed at that point would not.
    """
    collector.hold()
    try:
        status = main()
    finally:  # --help and a usage error end in SystemExit: theirs too
        gc.freeze()
    sys.exit(status)


def main(argv: Sequence[str] | None = None) -> ExitCode:
    words = sys.argv[1:] if argv is None else argv
    command = command_named(words)
    parser = build_parser(command, alone=bool(words) and words[0] == command)
    parser.epilog = exit_status_help()
    parser.formatter_class = _HelpFormatter
    args = parser.parse_args(argv)
    if args.command == "servers":
        from pytest_netbench._servers.catalog import listing

        print(listing(app=args.app))
        return ExitCode.OK
    run = _run_of(args.command)
    if run is not _load_run():
        collector.release()  # a load releases it as its load begins (_cli/loads.py)
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


def _load_run() -> Callable[[argparse.Namespace], ExitCode] | None:
    """The one-load commands' run, if their module is imported."""
    loads = sys.modules.get("pytest_netbench._cli.loads")
    return None if loads is None else loads.run_load


def _run_of(command: str) -> Callable[[argparse.Namespace], ExitCode]:
    """The command's run, its module imported only now: a one-request load imports neither
    the report files, the plots, Dask nor the plugin (issue 35;
    tests/integration/test_cli_start.py)."""
    if command in ("sweep", "capacity", "cold-start"):
        from pytest_netbench._cli.experiments import run_capacity, run_cold_start, run_sweep

        return {"sweep": run_sweep, "capacity": run_capacity, "cold-start": run_cold_start}[command]
    if command == "crosscheck":
        from pytest_netbench._cli.crosscheck import run_crosscheck

        return run_crosscheck
    if command == "compare":
        from pytest_netbench._cli.compare import run_compare

        return run_compare
    if command == "flow":
        from pytest_netbench._cli.flow import run_flow

        return run_flow
    if command == "scenarios":
        from pytest_netbench._cli.scenarios import run_scenarios_command

        return run_scenarios_command
    from pytest_netbench._cli.loads import run_load

    return run_load


if __name__ == "__main__":  # pragma: no cover
    command()
