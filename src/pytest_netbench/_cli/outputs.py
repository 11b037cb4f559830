"""A command's files (``--json``, ``--plot``, ``--html``; ``compare``'s ``--markdown``),
written by the report writers a pytest session's files go through
(:mod:`pytest_netbench._report.writers`)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_netbench._cli.exit_codes import ExitCode

if TYPE_CHECKING:
    from pytest_netbench._report.writers import CommandResult


@dataclass(frozen=True)
class CommandFiles:
    """The files a command's options ask for (the report writers' ``OutputSettings``)."""

    json_path: str | None = None
    markdown_path: str | None = None
    plot_dir: str | None = None
    html_path: str | None = None
    benchmark_json_path: str | None = None  # a session's only (pytest-benchmark's format)

    @classmethod
    def of(cls, args: argparse.Namespace) -> CommandFiles:
        def path(*names: str) -> str | None:
            given = [getattr(args, name, None) for name in names]
            return next((str(p) for p in given if p is not None), None)

        return cls(
            json_path=path("json", "json_path"),
            markdown_path=path("markdown"),
            plot_dir=path("plot"),
            html_path=path("html"),
        )


def write_files(args: argparse.Namespace, result: CommandResult, stem: str = "") -> ExitCode | None:
    """``--json``, ``--plot``, ``--html`` (``compare``: ``--markdown``), each written by its
    report writer, the ones a pytest session's files go through, with a line on stderr
    saying where (none with ``--quiet``). ``ExitCode.USAGE``, said on stderr, when a file
    cannot be written; else None."""
    files = CommandFiles.of(args)
    if files == CommandFiles():
        return None  # nothing asked for: the writers are not even imported
    from pytest_netbench._report.writers import WRITERS, command_outputs, write_outputs

    target = getattr(args, "url", getattr(args, "target", ""))
    name = f"netbench {args.command} {target}".strip()
    outputs = command_outputs(files, result, name=name, stem=stem)
    try:
        notes = write_outputs(WRITERS, outputs)
    except OSError as exc:
        print(f"netbench {args.command}: error: cannot write: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if not getattr(args, "quiet", False):
        for note in notes:
            print(note, file=sys.stderr)
    return None
