"""pytest-netbench: performance tests of network servers as ordinary pytest tests.

The library never imports pytest; the plugin lives in :mod:`pytest_netbench.plugin`.
Public names load on first use, so the plugin costs a pytest run nothing it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_netbench._version import VERSION

if TYPE_CHECKING:
    from pytest_netbench._api import echo_load as echo_load
    from pytest_netbench._api import echo_load_async as echo_load_async
    from pytest_netbench._api import http_load as http_load
    from pytest_netbench._api import http_load_async as http_load_async
    from pytest_netbench._api import run_spec as run_spec
    from pytest_netbench._compare.gate import MetricComparison as MetricComparison
    from pytest_netbench._compare.gate import Threshold as Threshold
    from pytest_netbench._compare.gate import compare_values as compare_values
    from pytest_netbench._compare.gate import parse_thresholds as parse_thresholds
    from pytest_netbench._errors import BuildFailed as BuildFailed
    from pytest_netbench._errors import InterpreterNotFound as InterpreterNotFound
    from pytest_netbench._errors import NetbenchError as NetbenchError
    from pytest_netbench._errors import PortInUseError as PortInUseError
    from pytest_netbench._errors import RemoteTargetError as RemoteTargetError
    from pytest_netbench._errors import ResourceLimitError as ResourceLimitError
    from pytest_netbench._errors import ServerCrashed as ServerCrashed
    from pytest_netbench._errors import ServerError as ServerError
    from pytest_netbench._errors import ServerStartupError as ServerStartupError
    from pytest_netbench._errors import SpecError as SpecError
    from pytest_netbench._errors import TargetUnreachableError as TargetUnreachableError
    from pytest_netbench._errors import ToolchainMissing as ToolchainMissing
    from pytest_netbench._errors import ToolFailed as ToolFailed
    from pytest_netbench._errors import ToolNotInstalled as ToolNotInstalled
    from pytest_netbench._experiment.capacity import CapacityResult as CapacityResult
    from pytest_netbench._experiment.capacity import CapacityStep as CapacityStep
    from pytest_netbench._experiment.capacity import capacity as capacity
    from pytest_netbench._experiment.cold_start import ColdStartResult as ColdStartResult
    from pytest_netbench._experiment.cold_start import cold_start as cold_start
    from pytest_netbench._experiment.crosscheck import CrosscheckResult as CrosscheckResult
    from pytest_netbench._experiment.crosscheck import crosscheck as crosscheck
    from pytest_netbench._experiment.slo import Slo as Slo
    from pytest_netbench._experiment.slo import TermCheck as TermCheck
    from pytest_netbench._experiment.slo import parse_slo as parse_slo
    from pytest_netbench._experiment.sweep import SweepResult as SweepResult
    from pytest_netbench._experiment.sweep import SweepStep as SweepStep
    from pytest_netbench._experiment.sweep import parse_rates as parse_rates
    from pytest_netbench._experiment.sweep import sweep as sweep
    from pytest_netbench._experiment.tool_output import ToolFigures as ToolFigures
    from pytest_netbench._live import HostProgress as HostProgress
    from pytest_netbench._live import LoadProgress as LoadProgress
    from pytest_netbench._live import StopSignal as StopSignal
    from pytest_netbench._metrics import metric_value as metric_value
    from pytest_netbench._model import ERROR_KINDS as ERROR_KINDS
    from pytest_netbench._model import GeneratorStats as GeneratorStats
    from pytest_netbench._model import LatencySummary as LatencySummary
    from pytest_netbench._model import LoadResult as LoadResult
    from pytest_netbench._model import LoadSpec as LoadSpec
    from pytest_netbench._model import ServerStats as ServerStats
    from pytest_netbench._model import TimelineRow as TimelineRow
    from pytest_netbench._servers import catalog as catalog
    from pytest_netbench._servers.launcher import Server as Server
    from pytest_netbench._servers.readiness import AllReady as AllReady
    from pytest_netbench._servers.readiness import CallableReady as CallableReady
    from pytest_netbench._servers.readiness import HttpReady as HttpReady
    from pytest_netbench._servers.readiness import LogReady as LogReady
    from pytest_netbench._servers.readiness import ReadinessCheck as ReadinessCheck
    from pytest_netbench._servers.readiness import TcpReady as TcpReady
    from pytest_netbench._servers.sampling import ProcessTreeSampler as ProcessTreeSampler
    from pytest_netbench._servers.spec import ServerSpec as ServerSpec
    from pytest_netbench._spec import http_spec as http_spec
    from pytest_netbench._spec import tcp_spec as tcp_spec

__version__ = VERSION

_LAZY: dict[str, str] = {
    "AllReady": "pytest_netbench._servers.readiness",
    "BuildFailed": "pytest_netbench._errors",
    "CallableReady": "pytest_netbench._servers.readiness",
    "CapacityResult": "pytest_netbench._experiment.capacity",
    "ColdStartResult": "pytest_netbench._experiment.cold_start",
    "ERROR_KINDS": "pytest_netbench._model",
    "GeneratorStats": "pytest_netbench._model",
    "HostProgress": "pytest_netbench._live",
    "HttpReady": "pytest_netbench._servers.readiness",
    "InterpreterNotFound": "pytest_netbench._errors",
    "LatencySummary": "pytest_netbench._model",
    "LoadProgress": "pytest_netbench._live",
    "LoadResult": "pytest_netbench._model",
    "LoadSpec": "pytest_netbench._model",
    "LogReady": "pytest_netbench._servers.readiness",
    "MetricComparison": "pytest_netbench._compare.gate",
    "NetbenchError": "pytest_netbench._errors",
    "PortInUseError": "pytest_netbench._errors",
    "CapacityStep": "pytest_netbench._experiment.capacity",
    "ProcessTreeSampler": "pytest_netbench._servers.sampling",
    "ReadinessCheck": "pytest_netbench._servers.readiness",
    "RemoteTargetError": "pytest_netbench._errors",
    "ResourceLimitError": "pytest_netbench._errors",
    "Server": "pytest_netbench._servers.launcher",
    "ServerCrashed": "pytest_netbench._errors",
    "ServerError": "pytest_netbench._errors",
    "ServerSpec": "pytest_netbench._servers.spec",
    "ServerStartupError": "pytest_netbench._errors",
    "ServerStats": "pytest_netbench._model",
    "Slo": "pytest_netbench._experiment.slo",
    "SpecError": "pytest_netbench._errors",
    "StopSignal": "pytest_netbench._live",
    "SweepResult": "pytest_netbench._experiment.sweep",
    "SweepStep": "pytest_netbench._experiment.sweep",
    "TargetUnreachableError": "pytest_netbench._errors",
    "TcpReady": "pytest_netbench._servers.readiness",
    "TermCheck": "pytest_netbench._experiment.slo",
    "Threshold": "pytest_netbench._compare.gate",
    "TimelineRow": "pytest_netbench._model",
    "ToolchainMissing": "pytest_netbench._errors",
    "ToolFailed": "pytest_netbench._errors",
    "ToolNotInstalled": "pytest_netbench._errors",
    "ToolFigures": "pytest_netbench._experiment.tool_output",
    "CrosscheckResult": "pytest_netbench._experiment.crosscheck",
    "crosscheck": "pytest_netbench._experiment.crosscheck",
    "capacity": "pytest_netbench._experiment.capacity",
    "catalog": "pytest_netbench._servers.catalog",
    "cold_start": "pytest_netbench._experiment.cold_start",
    "compare_values": "pytest_netbench._compare.gate",
    "echo_load": "pytest_netbench._api",
    "echo_load_async": "pytest_netbench._api",
    "http_load": "pytest_netbench._api",
    "http_load_async": "pytest_netbench._api",
    "http_spec": "pytest_netbench._spec",
    "metric_value": "pytest_netbench._metrics",
    "parse_rates": "pytest_netbench._experiment.sweep",
    "parse_slo": "pytest_netbench._experiment.slo",
    "parse_thresholds": "pytest_netbench._compare.gate",
    "run_spec": "pytest_netbench._api",
    "sweep": "pytest_netbench._experiment.sweep",
    "tcp_spec": "pytest_netbench._spec",
}

_MODULE_EXPORTS = frozenset({"catalog"})

__all__ = [
    "ERROR_KINDS",
    "AllReady",
    "BuildFailed",
    "CallableReady",
    "CapacityResult",
    "CapacityStep",
    "ColdStartResult",
    "CrosscheckResult",
    "GeneratorStats",
    "HostProgress",
    "HttpReady",
    "InterpreterNotFound",
    "LatencySummary",
    "LoadProgress",
    "LoadResult",
    "LoadSpec",
    "LogReady",
    "MetricComparison",
    "NetbenchError",
    "PortInUseError",
    "ProcessTreeSampler",
    "ReadinessCheck",
    "RemoteTargetError",
    "ResourceLimitError",
    "Server",
    "ServerCrashed",
    "ServerError",
    "ServerSpec",
    "ServerStartupError",
    "ServerStats",
    "Slo",
    "SpecError",
    "StopSignal",
    "SweepResult",
    "SweepStep",
    "TargetUnreachableError",
    "TcpReady",
    "TermCheck",
    "Threshold",
    "TimelineRow",
    "ToolFailed",
    "ToolFigures",
    "ToolNotInstalled",
    "ToolchainMissing",
    "__version__",
    "capacity",
    "catalog",
    "cold_start",
    "compare_values",
    "crosscheck",
    "echo_load",
    "echo_load_async",
    "http_load",
    "http_load_async",
    "http_spec",
    "metric_value",
    "parse_rates",
    "parse_slo",
    "parse_thresholds",
    "run_spec",
    "sweep",
    "tcp_spec",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_netbench' has no attribute {name!r}")
    imported = importlib.import_module(module)
    # A few names are modules themselves; the rest (``sweep`` too) are defined in one.
    value = imported if name in _MODULE_EXPORTS else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
