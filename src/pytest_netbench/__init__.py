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
from pytest_netbench._servers import catalog
from pytest_netbench._servers.launcher import Server
from pytest_netbench._servers.readiness import (
    AllReady,
    CallableReady,
    HttpReady,
    LogReady,
    ReadinessProbe,
    TcpReady,
)
from pytest_netbench._servers.sampling import ProcessTreeSampler
from pytest_netbench._servers.spec import ServerSpec

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "AllReady",
    "BuildFailed",
    "CallableReady",
    "GeneratorStats",
    "HttpReady",
    "InterpreterNotFound",
    "LatencySummary",
    "LoadResult",
    "LoadSpec",
    "LogReady",
    "NetbenchError",
    "PortInUseError",
    "ProcessTreeSampler",
    "ReadinessProbe",
    "RemoteTargetError",
    "ResourceLimitError",
    "Server",
    "ServerCrashed",
    "ServerError",
    "ServerSpec",
    "ServerStartupError",
    "ServerStats",
    "SpecError",
    "TargetUnreachableError",
    "TcpReady",
    "TimelineRow",
    "ToolchainMissing",
    "__version__",
    "catalog",
    "echo_load",
    "echo_load_async",
    "http_load",
    "http_load_async",
    "http_spec",
    "run_spec",
    "tcp_spec",
]
