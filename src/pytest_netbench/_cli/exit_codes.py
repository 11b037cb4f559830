"""Every exit status of the ``netbench`` command, in one table (docs/cli.md shows it, and
``netbench --help`` ends with it).

2 stays what argparse itself exits with on a usage error, so a command line argparse
rejects and one the library rejects (``--rates 5:1``, an SLO it cannot read, a file
``compare`` cannot read) read the same to a script: nothing was measured or judged.
130 is what a shell reports for a program stopped by SIGINT (128 + 2).

A Python traceback (a bug in netbench) exits 1, as any Python program does: the same
number as ``REGRESSION``, so a CI gate fails either way.
"""

from __future__ import annotations

import enum
import textwrap


@enum.unique
class ExitCode(enum.IntEnum):
    """How a ``netbench`` command ended; :attr:`meaning` says it in a line."""

    OK = 0
    REGRESSION = 1
    USAGE = 2
    UNREACHABLE = 3
    REFUSED = 4
    INVALID = 5
    UNKNOWN_CAPACITY = 6
    UNCLEAR = 7
    NO_SUCCESS = 8
    THRESHOLD_FAILED = 9
    UNDETECTABLE = 10
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        """One line: when the command exits with this status."""
        return _MEANINGS[self]


_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "done: the load ran and at least one request succeeded (and every"
    " --threshold held), a capacity was found, or the gate passed",
    ExitCode.REGRESSION: "compare: a gated metric regressed",
    ExitCode.USAGE: "bad arguments or input: an option or value that cannot work, a file"
    " that cannot be read or written, or is not a session file",
    ExitCode.UNREACHABLE: "the target could not be reached at all (not one connection)",
    ExitCode.REFUSED: "refused to run: a non-loopback target without --allow-remote, too few"
    " fds or ports, a missing tool or extra, a failed worker",
    ExitCode.INVALID: "--fail-invalid was given and a result is invalid",
    ExitCode.UNKNOWN_CAPACITY: 'capacity: the search ended without a number ("unknown": the'
    " reason is printed)",
    ExitCode.UNCLEAR: "compare: no regression, but a gated metric needs more trials, or the"
    " two files have no test in common",
    ExitCode.NO_SUCCESS: "http, echo, cold-start, crosscheck, sweep: not one request (echo:"
    " exchange) succeeded; the last line says what the answers were, with a sample",
    ExitCode.THRESHOLD_FAILED: "http, echo, cold-start: a --threshold term did not hold (each"
    " term is printed with its value)",
    ExitCode.UNDETECTABLE: "compare: no regression, but a gated metric's limit is below the"
    " smallest change this runner's noise lets the trials show (the note names a quieter"
    " metric to gate); pytest --netbench exits with it too",
    ExitCode.INTERRUPTED: "interrupted by Ctrl-C: what was measured until then is printed"
    " and written, marked interrupted",
}


def exit_status_help(codes: tuple[ExitCode, ...] = tuple(ExitCode), *, width: int = 79) -> str:
    """The table for a ``--help`` epilog: ``exit status:`` and a code per entry, its meaning
    wrapped under it (the epilog is printed as written)."""
    name_width = max(len(code.name) for code in codes)
    lines = ["exit status:"]
    for code in codes:
        head = f"  {code.value:>3}  {code.name:<{name_width}}  "
        lines += textwrap.wrap(
            code.meaning,
            width=width,
            initial_indent=head,
            subsequent_indent=" " * len(head),
            break_on_hyphens=False,
        )
    return "\n".join(lines) + "\n"
