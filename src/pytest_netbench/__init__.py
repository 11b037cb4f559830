"""pytest-netbench: performance tests of network servers as ordinary pytest tests.

The library never imports pytest; the plugin lives in :mod:`pytest_netbench.plugin`.
"""

from __future__ import annotations

from pytest_netbench._api import (
    echo_load,
    echo_load_async,
    http_load,
    http_load_async,
    http_spec,
    run_spec,
    tcp_spec,
)
from pytest_netbench._errors import (
    BuildFailed,
    InterpreterNotFound,
    NetbenchError,
    PortInUseError,
    RemoteTargetError,
    ResourceLimitError,
    ServerCrashed,
    ServerError,
    ServerStartupError,
    SpecError,
    TargetUnreachableError,
    ToolchainMissing,
)
from pytest_netbench._model import (
    ERROR_KINDS,
    GeneratorStats,
    LatencySummary,
    LoadResult,
    LoadSpec,
    ServerStats,
    TimelineRow,
)

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "BuildFailed",
    "GeneratorStats",
    "InterpreterNotFound",
    "LatencySummary",
    "LoadResult",
    "LoadSpec",
    "NetbenchError",
    "PortInUseError",
    "RemoteTargetError",
    "ResourceLimitError",
    "ServerCrashed",
    "ServerError",
    "ServerStartupError",
    "ServerStats",
    "SpecError",
    "TargetUnreachableError",
    "TimelineRow",
    "ToolchainMissing",
    "__version__",
    "echo_load",
    "echo_load_async",
    "http_load",
    "http_load_async",
    "http_spec",
    "run_spec",
    "tcp_spec",
]
