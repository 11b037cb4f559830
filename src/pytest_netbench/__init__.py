"""pytest-netbench: performance tests of network servers as ordinary pytest tests.

The library never imports pytest; the plugin lives in :mod:`pytest_netbench.plugin`.
Public names load on first use, so the plugin costs a pytest run nothing it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_netbench._api import echo_load as echo_load
    from pytest_netbench._api import echo_load_async as echo_load_async
    from pytest_netbench._api import http_load as http_load
    from pytest_netbench._api import http_load_async as http_load_async
    from pytest_netbench._api import http_spec as http_spec
    from pytest_netbench._api import run_spec as run_spec
    from pytest_netbench._api import tcp_spec as tcp_spec
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
    from pytest_netbench._servers.readiness import ReadinessProbe as ReadinessProbe
    from pytest_netbench._servers.readiness import TcpReady as TcpReady
    from pytest_netbench._servers.sampling import ProcessTreeSampler as ProcessTreeSampler
    from pytest_netbench._servers.spec import ServerSpec as ServerSpec

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "AllReady": "pytest_netbench._servers.readiness",
    "BuildFailed": "pytest_netbench._errors",
    "CallableReady": "pytest_netbench._servers.readiness",
    "ERROR_KINDS": "pytest_netbench._model",
    "GeneratorStats": "pytest_netbench._model",
    "HttpReady": "pytest_netbench._servers.readiness",
    "InterpreterNotFound": "pytest_netbench._errors",
    "LatencySummary": "pytest_netbench._model",
    "LoadResult": "pytest_netbench._model",
    "LoadSpec": "pytest_netbench._model",
    "LogReady": "pytest_netbench._servers.readiness",
    "NetbenchError": "pytest_netbench._errors",
    "PortInUseError": "pytest_netbench._errors",
    "ProcessTreeSampler": "pytest_netbench._servers.sampling",
    "ReadinessProbe": "pytest_netbench._servers.readiness",
    "RemoteTargetError": "pytest_netbench._errors",
    "ResourceLimitError": "pytest_netbench._errors",
    "Server": "pytest_netbench._servers.launcher",
    "ServerCrashed": "pytest_netbench._errors",
    "ServerError": "pytest_netbench._errors",
    "ServerSpec": "pytest_netbench._servers.spec",
    "ServerStartupError": "pytest_netbench._errors",
    "ServerStats": "pytest_netbench._model",
    "SpecError": "pytest_netbench._errors",
    "TargetUnreachableError": "pytest_netbench._errors",
    "TcpReady": "pytest_netbench._servers.readiness",
    "TimelineRow": "pytest_netbench._model",
    "ToolchainMissing": "pytest_netbench._errors",
    "catalog": "pytest_netbench._servers.catalog",
    "echo_load": "pytest_netbench._api",
    "echo_load_async": "pytest_netbench._api",
    "http_load": "pytest_netbench._api",
    "http_load_async": "pytest_netbench._api",
    "http_spec": "pytest_netbench._api",
    "run_spec": "pytest_netbench._api",
    "tcp_spec": "pytest_netbench._api",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_netbench' has no attribute {name!r}")
    if name == module.rpartition(".")[2]:
        value = importlib.import_module(module)
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
