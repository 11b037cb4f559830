"""``netbench sweep``, ``netbench capacity`` and ``netbench cold-start``: experiments
printed as they go.

A sweep prints a row per rate the moment its step ends, as autobench's table does, and a
line saying why it stopped if it stopped past saturation. A capacity search prints each
step (rate, verdict, why) and then the answer, or "unknown" and the reason. A cold start
prints its timeline a row per 100 ms, then the first-second and steady rates and when the
rate settled.
"""

from __future__ import annotations

import argparse

from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._cli.live import CommandLive
from pytest_netbench._cli.loads import (
    check_plot,
    interrupted_banner,
    load_status,
    mix_names,
    read_thresholds,
)
from pytest_netbench._cli.options import given, load_options
from pytest_netbench._cli.outputs import write_files
from pytest_netbench._model import LoadResult, why_no_latency


def run_sweep(args: argparse.Namespace) -> ExitCode:
    from pytest_netbench._experiment.sweep import SweepStep, parse_rates, sweep
    from pytest_netbench._input.spec import http_spec
    from pytest_netbench._report.experiments import sweep_closing, sweep_heading, sweep_row

    rates = parse_rates(args.rates)
    spec = http_spec(args.url, **load_options(args, "http"))  # checked before any load
    check_plot(args)
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        live.say(*sweep_heading(spec, rates))

        def print_row(step: SweepStep) -> None:
            live.say(*sweep_row(step))

        result = sweep(
            spec,
            rates=rates,
            stop_p99_ms=args.stop_p99_ms,
            stop_error_rate=args.stop_error_rate,
            cluster=args.cluster,
            progress=live.progress,
            stop=live.stop,
            on_step=print_row,
            **given(retries=args.retries),
        )
        live.say(*sweep_closing(result))
        nothing = bool(result.steps) and all(step.result.ok == 0 for step in result.steps)
        if nothing:
            live.say("", _no_success_anywhere(result.steps[-1].result, len(result.steps)))
    unwritten = write_files(args, result)
    if unwritten is not None:
        return unwritten
    if result.interrupted:
        return ExitCode.INTERRUPTED
    if nothing:
        return ExitCode.NO_SUCCESS
    if args.fail_invalid and not result.valid:
        return ExitCode.INVALID
    return ExitCode.OK


def _no_success_anywhere(last: LoadResult, steps: int) -> str:
    """The closing line of a sweep in which no step had an ok response."""
    _, _, detail = why_no_latency(last).partition(": ")
    return f"NO REQUEST SUCCEEDED at any of the {steps} rate(s); at the last: {detail}"


def run_capacity(args: argparse.Namespace) -> ExitCode:
    from pytest_netbench._experiment.capacity import CAPACITY_UNITS, CapacityStep, capacity
    from pytest_netbench._experiment.slo import SloTerm, parse_slo
    from pytest_netbench._input.spec import http_spec
    from pytest_netbench._report.experiments import (
        capacity_answer,
        capacity_heading,
        capacity_step_lines,
    )

    goal = parse_slo(args.slo)
    spec = http_spec(args.url, **load_options(args, "http"))  # checked before any load
    check_plot(args)
    shown = goal
    if args.max_error_rate is not None:
        shown = goal.with_term(SloTerm("error_rate", "<=", args.max_error_rate))
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        live.say(*capacity_heading(spec, shown.text, args.precision, args.over))
        numbered = 0

        def print_step(step: CapacityStep) -> None:
            nonlocal numbered
            numbered += 1
            live.say(*capacity_step_lines(numbered, step, CAPACITY_UNITS[args.over]))

        result = capacity(
            spec,
            slo=goal,
            max_error_rate=args.max_error_rate,
            precision=args.precision,
            cluster=args.cluster,
            progress=live.progress,
            stop=live.stop,
            on_step=print_step,
            over=args.over,
            **given(
                start_rate=args.start_rate,
                min_rate=args.min_rate,
                max_rate=args.max_rate,
                max_steps=args.max_steps,
                retries=args.retries,
            ),
        )
        live.say(*capacity_answer(result))
    unwritten = write_files(args, result)
    if unwritten is not None:
        return unwritten
    if result.interrupted:
        return ExitCode.INTERRUPTED
    # Unknown: the generator could not produce the rates, no rate met the SLO, every rate
    # up to --max-rate did, or the step budget ran out.
    return ExitCode.OK if result.known else ExitCode.UNKNOWN_CAPACITY


def run_cold_start(args: argparse.Namespace) -> ExitCode:
    from pytest_netbench._experiment.cold_start import DEFAULT_RESOLUTION_S, cold_start
    from pytest_netbench._input.spec import http_spec
    from pytest_netbench._load.api import run_spec
    from pytest_netbench._model import LoadSpec
    from pytest_netbench._report.experiments import cold_start_heading, cold_start_lines
    from pytest_netbench._report.summary import no_success_line, threshold_lines

    options = load_options(args, "http")
    thresholds = read_thresholds(args, requests=mix_names(options))
    resolution = args.resolution if args.resolution is not None else DEFAULT_RESOLUTION_S
    spec = http_spec(args.url, **options)  # checked before any load
    check_plot(args)
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        live.say(*cold_start_heading(spec, resolution))

        def run(step: LoadSpec) -> LoadResult:
            return run_spec(step, progress=live.progress, stop=live.stop, cluster=args.cluster)

        result = cold_start(
            spec,
            resolution=resolution,
            runner=run,
            **given(
                settle_tolerance=args.settle_tolerance,
                settle_window=args.settle_window,
                retries=args.retries,
            ),
        )
        kept = result.result
        if kept.interrupted:
            live.say(interrupted_banner(kept))
        live.say(*cold_start_lines(result))
        verdict = thresholds.evaluate(kept) if thresholds is not None else None
        if verdict is not None:
            live.say(*threshold_lines(verdict, kept))
        if kept.ok == 0:
            live.say("", no_success_line(kept))
    unwritten = write_files(args, result)
    if unwritten is not None:
        return unwritten
    return load_status(kept, verdict, fail_invalid=args.fail_invalid)
