"""The ``netbench`` command: ``http``, ``echo``, ``sweep``, ``capacity``, ``cold-start``,
``crosscheck``, ``compare`` and ``servers``, in the spirit of wrk, ab and autobench. The
parts are in :mod:`pytest_netbench._cli`.

Exit status:

- 0: the run ended (whatever the server answered); for ``capacity``, a capacity was found
- 2: bad arguments (the message says which and what to write instead)
- 3: the target could not be reached at all
- 4: other refusals (a remote target without ``--allow-remote``, the fd limit)
- 5: ``--fail-invalid`` was given and a result is invalid
- 6: ``capacity`` ended without a number ("unknown": the reason is printed)
- ``compare``: 0 the gate passed, 1 a gated metric regressed, 2 bad input, 7 unclear
  (see :mod:`pytest_netbench._cli.compare`)
- 130: interrupted by Ctrl-C; what was measured until then is printed (and written with
  ``--json``), marked interrupted
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pytest_netbench._cli.compare import run_compare
from pytest_netbench._cli.crosscheck import run_crosscheck
from pytest_netbench._cli.experiments import (
    EXIT_UNKNOWN,
    run_capacity,
    run_cold_start,
    run_sweep,
)
from pytest_netbench._cli.loads import EXIT_INTERRUPTED, EXIT_INVALID, run_load
from pytest_netbench._cli.options import build_parser
from pytest_netbench._errors import NetbenchError, SpecError, TargetUnreachableError

EXIT_BAD_ARGS = 2
EXIT_UNREACHABLE = 3
EXIT_REFUSED = 4

__all__ = [
    "EXIT_BAD_ARGS",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXIT_REFUSED",
    "EXIT_UNKNOWN",
    "EXIT_UNREACHABLE",
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "servers":
        from pytest_netbench._servers.catalog import listing

        print(listing(app=args.app))
        return 0
    experiments = {
        "sweep": run_sweep,
        "capacity": run_capacity,
        "cold-start": run_cold_start,
        "crosscheck": run_crosscheck,
        "compare": run_compare,
    }
    run = experiments.get(args.command, run_load)
    try:
        return run(args)
    except SpecError as exc:
        parser.exit(EXIT_BAD_ARGS, f"netbench {args.command}: error: {exc}\n")
    except TargetUnreachableError as exc:
        print(f"netbench: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except NetbenchError as exc:
        print(f"netbench: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        # A second Ctrl-C (the first stops the run cleanly), or one with no run to stop.
        print("netbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
