"""The public surface is what ``__all__`` says, and importing it never imports pytest."""

from __future__ import annotations

import subprocess
import sys

import pytest_netbench

EXPECTED = {
    "ERROR_KINDS", "AllReady", "BuildFailed", "CallableReady", "GeneratorStats",
    "HostProgress", "HttpReady", "InterpreterNotFound", "LatencySummary", "LoadResult",
    "LoadSpec", "LogReady",
    "NetbenchError", "PortInUseError", "ProcessTreeSampler", "ReadinessCheck",
    "RemoteTargetError", "ResourceLimitError", "Server", "ServerCrashed", "ServerError",
    "ServerSpec", "ServerStartupError", "ServerStats", "SpecError", "TargetUnreachableError",
    "TcpReady", "TimelineRow", "ToolchainMissing", "__version__", "catalog", "echo_load",
    "echo_load_async", "http_load", "http_load_async", "http_spec", "run_spec", "tcp_spec",
    # the regression gate's verdicts, usable without pytest (benchmarks/gate_false_alarm.py)
    "MetricComparison", "Threshold", "compare_values", "metric_value", "parse_thresholds",
    # experiments, their results and the SLOs they check
    "sweep", "SweepResult", "SweepStep", "parse_rates",
    "capacity", "CapacityResult", "CapacityStep",
    "cold_start", "ColdStartResult", "Slo", "TermCheck", "parse_slo",
    # the same load measured by a second tool (wrk, ab)
    "crosscheck", "CrosscheckResult", "ToolFigures", "ToolNotInstalled", "ToolFailed",
    # a running load: live progress out, a stop request in
    "LoadProgress", "StopSignal",
}  # fmt: skip


def test_all_is_pinned() -> None:
    assert set(pytest_netbench.__all__) == EXPECTED


def test_every_exported_name_exists_and_public_ones_are_not_private() -> None:
    for name in pytest_netbench.__all__:
        value = getattr(pytest_netbench, name)
        module = getattr(value, "__module__", "pytest_netbench") or ""
        assert module.startswith("pytest_netbench"), name


def test_importing_the_library_does_not_import_pytest() -> None:
    code = "import sys, pytest_netbench; print('pytest' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_experiments_are_the_functions_not_their_modules() -> None:
    assert callable(pytest_netbench.sweep)
    assert callable(pytest_netbench.capacity)
    assert pytest_netbench.sweep.__name__ == "sweep"
    assert pytest_netbench.capacity.__name__ == "capacity"
    assert pytest_netbench.cold_start.__name__ == "cold_start"
