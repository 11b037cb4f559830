"""``netbench compare BASE.json HEAD.json``: the regression gate outside pytest.

Two session files (``--netbench-json``, or runs stored by ``--netbench-save`` under
``.netbench/``) are matched test by test and judged by the same code as the plugin's
``--netbench-compare``: the same verdicts, the same table. HEAD's trials are read with
the looks that took them when the run was sequential (``--netbench-sequential``, noted in
the file). Each metric's noise floor comes from the runs stored for this machine under
``--storage`` when there are some.

Exit status (:class:`~pytest_netbench._cli.exit_codes.ExitCode`, also in
``netbench compare --help``): ``OK`` (0) the gate passed, every gated metric ok or improved;
``REGRESSION`` (1) a gated metric regressed; ``USAGE`` (2) a malformed threshold or option,
a file that cannot be read or written or is not a session file; ``UNCLEAR`` (7) no
regression, but a gated metric needs more trials to decide, or the two files have no test
in common; ``UNDETECTABLE`` (10) no regression, but a gated metric's limit is below what
this runner's noise lets the trials show (it wins over ``UNCLEAR``: more trials within the
budget would not help it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_netbench._cli.exit_codes import ExitCode, exit_status_help
from pytest_netbench._cli.outputs import write_files
from pytest_netbench._input.flags import SHARED_BY_NAME, shared_help

if TYPE_CHECKING:
    from pytest_netbench._compare.sequential import SequentialDesign

_STATUSES = (
    ExitCode.OK,
    ExitCode.REGRESSION,
    ExitCode.USAGE,
    ExitCode.UNCLEAR,
    ExitCode.UNDETECTABLE,
)
_EPILOG = (
    'example: netbench compare base.json head.json --fail "p99_ms:10%,rps:5%"\n\n'
    + exit_status_help(_STATUSES)
)


def add_compare_options(parser: argparse.ArgumentParser) -> None:
    """Add ``compare``'s arguments to its parser, made by ``_cli.options.build_parser``."""
    parser.description = (
        "Compare HEAD's results with BASE's, test by test, with the same "
        "verdicts as pytest --netbench-compare."
    )
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("base", metavar="BASE.json", help="the baseline session file")
    parser.add_argument("head", metavar="HEAD.json", help="the session file to judge")
    parser.add_argument(
        "--fail",
        default=None,
        metavar="SPEC",
        help='thresholds that fail the gate, e.g. "p99_ms:10%%,server.cpu_ms_per_request:5%%"'
        " (without: report only, exit 0 unless the input is bad)",
    )
    _add_shared(
        parser,
        "metrics",
        what="beside the gated ones",
        default_words="rps, p50_ms, p99_ms, errors_total and, when measured,"
        " server.cpu_ms_per_request with its user and system parts",
    )
    _add_shared(parser, "alpha", default_words="the one HEAD's session used, else 0.01")
    _add_shared(parser, "storage", what=": their trials give each metric's noise floor")
    _add_shared(parser, "markdown", what="the table")
    _add_shared(parser, "json", what="the verdicts", dest="json_path")


def _add_shared(
    parser: argparse.ArgumentParser,
    name: str,
    *,
    what: str = "",
    default_words: str = "",
    dest: str | None = None,
) -> None:
    """A flag the plugin has as ``--netbench-NAME``, here ``--NAME``, from the one row."""
    flag = SHARED_BY_NAME[name]
    parser.add_argument(
        flag.cli_flag,
        type=flag.value_type,
        default=flag.default,
        metavar=flag.metavar,
        help=shared_help(name, what=what, default=default_words or flag.default),
        dest=dest or name,
    )


def run_compare(args: argparse.Namespace) -> ExitCode:
    """Judge HEAD against BASE and print the table; the exit status says the verdict."""
    from pytest_netbench._compare.family import GateRule
    from pytest_netbench._compare.gate import (
        DEFAULT_COMPARE_METRICS,
        check_request_names,
        compare_runs,
    )
    from pytest_netbench._compare.metrics import check_metrics
    from pytest_netbench._compare.noise import stored_noise
    from pytest_netbench._compare.records import load_session_json
    from pytest_netbench._compare.thresholds import parse_thresholds
    from pytest_netbench._errors import NetbenchError
    from pytest_netbench._report.comparison import render_comparison_text

    try:
        thresholds = parse_thresholds(args.fail) if args.fail is not None else []
        metrics = (
            check_metrics(args.metrics.split(",")) if args.metrics else DEFAULT_COMPARE_METRICS
        )
        alpha = float(args.alpha) if args.alpha is not None else _alpha_of(args.head)
        if not 0 < alpha < 0.5:
            raise ValueError(f"--alpha must be between 0 and 0.5, got {alpha:g}")
        base = load_session_json(args.base)
        head = load_session_json(args.head)
        # by_request.NAME.METRIC must name a request some test of the two files sent.
        check_request_names(
            [*metrics, *(t.metric for t in thresholds)],
            [r.result for r in (*base.records, *head.records)],
        )
    except (NetbenchError, ValueError) as exc:
        print(f"netbench compare: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    noise = stored_noise(args.storage, [*metrics, *(t.metric for t in thresholds)])
    comparison = compare_runs(
        head.records,
        base.records,
        thresholds,
        metrics=metrics,
        rule=GateRule(alpha=alpha, design=_design_of(args.head)),
        baseline_name=Path(args.base).name,
        current_experiments=head.experiments,
        baseline_experiments=base.experiments,
        noise=noise,
    )
    print(render_comparison_text(comparison), end="")
    unwritten = write_files(args, comparison)  # --markdown, --json
    if unwritten is not None:
        return unwritten
    if comparison.failed:
        return ExitCode.REGRESSION
    if comparison.cannot_tell:
        return ExitCode.UNDETECTABLE
    if not comparison.items or (thresholds and comparison.unclear):
        if not comparison.items:
            print("netbench compare: the two files have no test in common", file=sys.stderr)
        return ExitCode.UNCLEAR
    return ExitCode.OK


def _alpha_of(path: str) -> float:
    """The false-alarm rate a session file's own gate used (--netbench-alpha), else the
    default: so that comparing the files again gives the verdicts the session gave."""
    from pytest_netbench._compare.family import DEFAULT_ALPHA

    try:
        gate = json.loads(Path(path).read_text("utf-8")).get("gate") or {}
        return float(gate["alpha"])
    except (KeyError, TypeError, ValueError, OSError, AttributeError):
        return DEFAULT_ALPHA


def _design_of(path: str) -> SequentialDesign | None:
    """The sequential design a session file's trials were taken with, if any."""
    from pytest_netbench._compare.sequential import SequentialDesign

    try:
        gate = json.loads(Path(path).read_text("utf-8")).get("gate") or {}
        batch, budget = (int(n) for n in gate["sequential"])
        return SequentialDesign.every(batch, budget)
    except (KeyError, TypeError, ValueError, OSError, AttributeError):
        return None
