"""Experiments: everything that runs more than one load and decides from their results.

Trials (the median trial, the spread, reruns of trials the generator spoiled), A/B trials
in ABBA order, rate sweeps, capacity searches against an SLO, cold starts, crosschecks
with a second tool (wrk, ab). No pytest here:
the plugin, the CLI and the Python API share this layer, each passing in a *runner* that
wraps every load the way it needs (the plugin's measured-window lock and recording, the
CLI's progress). Every experiment returns a frozen result with ``to_dict()``/``from_dict()``
that holds every load it ran.
"""

from __future__ import annotations

from pytest_netbench._experiment.capacity import CapacityResult, CapacityStep, capacity
from pytest_netbench._experiment.cold_start import ColdStartResult, cold_start
from pytest_netbench._experiment.crosscheck import CrosscheckResult, crosscheck
from pytest_netbench._experiment.running import default_runner
from pytest_netbench._experiment.slo import Slo, SloVerdict, TermCheck, parse_slo
from pytest_netbench._experiment.sweep import SweepResult, SweepStep, parse_rates, sweep
from pytest_netbench._experiment.trials import (
    AbResult,
    Arm,
    TrialsResult,
    ab_trials,
    median_trial,
    run_trials,
)
from pytest_netbench._load.attempts import Attempts, Runner, run_with_retries

__all__ = [
    "AbResult",
    "Arm",
    "Attempts",
    "CapacityResult",
    "CapacityStep",
    "ColdStartResult",
    "CrosscheckResult",
    "Runner",
    "Slo",
    "SloVerdict",
    "SweepResult",
    "SweepStep",
    "TermCheck",
    "TrialsResult",
    "ab_trials",
    "capacity",
    "cold_start",
    "crosscheck",
    "default_runner",
    "median_trial",
    "parse_rates",
    "parse_slo",
    "run_trials",
    "run_with_retries",
    "sweep",
]
