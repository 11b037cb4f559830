"""The public API in one table: each name ``pytest_netbench`` exports, and the module that
defines it.

Everything else is derived from it: ``__all__``, the package's lazy ``__getattr__`` (a name
is imported on first use, so the plugin costs a pytest run nothing it does not use), and
every public class's and function's ``__module__``, which :func:`publish` sets to
``pytest_netbench`` as the defining module finishes: tracebacks print
``pytest_netbench.SpecError``, and pickles (results and errors coming back from worker
processes and Dask workers) name the stable public path, which ``pytest_netbench``'s
``__getattr__`` resolves in any process. The type checkers' copy of the table (the imports
under ``TYPE_CHECKING`` in ``__init__.py``) is held to it by a test, and so are
``docs/api.md`` and the ``publish(globals())`` ending each defining module.

This module imports nothing, so every defining module may import it.
"""

from __future__ import annotations

from types import FunctionType
from typing import Any

PACKAGE = "pytest_netbench"

# name -> the module defining it (``catalog`` names a module: that module is the export).
PUBLIC: dict[str, str] = {
    # one load
    "http_load": "pytest_netbench._load.api",
    "http_load_async": "pytest_netbench._load.api",
    "grpc_load": "pytest_netbench._load.api",
    "sse_load": "pytest_netbench._load.api",
    "llm_load": "pytest_netbench._load.api",
    "echo_load": "pytest_netbench._load.api",
    "echo_load_async": "pytest_netbench._load.api",
    "ws_load": "pytest_netbench._load.api",
    "ws_load_async": "pytest_netbench._load.api",
    "run_spec": "pytest_netbench._load.api",
    "run_scenarios": "pytest_netbench._load.scenarios",
    "Scenario": "pytest_netbench._load.scenarios",
    "ScenariosResult": "pytest_netbench._load.scenarios",
    "http_spec": "pytest_netbench._input.spec",
    "grpc_spec": "pytest_netbench._input.grpc",
    "grpc_message_from_json": "pytest_netbench._input.grpc_schema",
    "echo_spec": "pytest_netbench._input.spec",
    "ws_spec": "pytest_netbench._input.spec",
    "HttpOptions": "pytest_netbench._input.options",
    "EchoOptions": "pytest_netbench._input.options",
    "WsOptions": "pytest_netbench._input.options",
    "LlmOptions": "pytest_netbench._input.options",
    "LoadSpec": "pytest_netbench._model.spec",
    "Request": "pytest_netbench._model.spec",
    "Check": "pytest_netbench._model.checks",
    "CheckStats": "pytest_netbench._model.checks",
    "Stage": "pytest_netbench._model.stages",
    "feeders": "pytest_netbench._model.feeders",
    "preview": "pytest_netbench._proto.source",
    "load_mix": "pytest_netbench._input.mix_file",
    # its result
    "LoadResult": "pytest_netbench._model.result",
    "LatencySummary": "pytest_netbench._model.sections",
    "Phases": "pytest_netbench._model.phases",
    "ServerProfile": "pytest_netbench._model.profile",
    "FunctionCost": "pytest_netbench._model.profile",
    "GeneratorStats": "pytest_netbench._model.sections",
    "ServerStats": "pytest_netbench._model.sections",
    "TimelineRow": "pytest_netbench._model.sections",
    "RequestStats": "pytest_netbench._model.requests",
    "ShareStats": "pytest_netbench._model.sections",
    "ProbeStats": "pytest_netbench._model.sections",
    "StreamStats": "pytest_netbench._model.streams",
    "EventCounts": "pytest_netbench._model.streams",
    "ERROR_KINDS": "pytest_netbench._model.kinds",
    "metric_value": "pytest_netbench._compare.metrics",
    # user flows: virtual users running an async function of an httpx client
    "flow": "pytest_netbench._flow.api",
    "flow_async": "pytest_netbench._flow.api",
    "think": "pytest_netbench._flow.think",
    "step": "pytest_netbench._flow.steps",
    "FlowScenario": "pytest_netbench._flow.scenario",
    "ThinkTime": "pytest_netbench._flow.think",
    "LeanClient": "pytest_netbench._flow.lean",
    "LeanResponse": "pytest_netbench._flow.lean",
    "LeanRequestError": "pytest_netbench._flow.lean",
    "LeanStatusError": "pytest_netbench._flow.lean",
    "SessionStats": "pytest_netbench._model.sessions",
    # a running load: live progress out, a stop request in
    "LoadProgress": "pytest_netbench._model.live",
    "HostProgress": "pytest_netbench._model.live",
    "StopSignal": "pytest_netbench._model.live",
    # experiments, their results and the SLOs they check
    "sweep": "pytest_netbench._experiment.sweep",
    "SweepResult": "pytest_netbench._experiment.sweep",
    "SweepStep": "pytest_netbench._experiment.sweep",
    "parse_rates": "pytest_netbench._experiment.sweep",
    "capacity": "pytest_netbench._experiment.capacity",
    "CapacityResult": "pytest_netbench._experiment.capacity",
    "CapacityStep": "pytest_netbench._experiment.capacity",
    "cold_start": "pytest_netbench._experiment.cold_start",
    "ColdStartResult": "pytest_netbench._experiment.cold_start",
    "crosscheck": "pytest_netbench._experiment.crosscheck",
    "CrosscheckResult": "pytest_netbench._experiment.crosscheck",
    "ToolFigures": "pytest_netbench._experiment.tool_output",
    "Slo": "pytest_netbench._experiment.slo",
    "TermCheck": "pytest_netbench._experiment.slo",
    "parse_slo": "pytest_netbench._experiment.slo",
    # the regression gate's verdicts, usable without pytest
    "compare_values": "pytest_netbench._compare.metric_verdict",
    "MetricComparison": "pytest_netbench._compare.metric_verdict",
    "Threshold": "pytest_netbench._compare.thresholds",
    "parse_thresholds": "pytest_netbench._compare.thresholds",
    # servers under test
    "Server": "pytest_netbench._servers.launcher",
    "ServerSpec": "pytest_netbench._servers.spec",
    "ProcessTreeSampler": "pytest_netbench._servers.sampling",
    "catalog": "pytest_netbench._servers.catalog",
    "ReadinessCheck": "pytest_netbench._servers.readiness",
    "ReadinessContext": "pytest_netbench._servers.readiness",
    "TcpReady": "pytest_netbench._servers.readiness",
    "HttpReady": "pytest_netbench._servers.readiness",
    "Http2Ready": "pytest_netbench._servers.readiness",
    "LogReady": "pytest_netbench._servers.readiness",
    "CallableReady": "pytest_netbench._servers.readiness",
    "AllReady": "pytest_netbench._servers.readiness",
    # errors raised on purpose
    "NetbenchError": "pytest_netbench._errors",
    "SpecError": "pytest_netbench._errors",
    "FeederExhausted": "pytest_netbench._errors",
    "FlowError": "pytest_netbench._errors",
    "TargetUnreachableError": "pytest_netbench._errors",
    "RemoteTargetError": "pytest_netbench._errors",
    "ResourceLimitError": "pytest_netbench._errors",
    "ServerError": "pytest_netbench._errors",
    "ServerStartupError": "pytest_netbench._errors",
    "ServerCrashed": "pytest_netbench._errors",
    "PortInUseError": "pytest_netbench._errors",
    "InterpreterNotFound": "pytest_netbench._errors",
    "BuildFailed": "pytest_netbench._errors",
    "ToolchainMissing": "pytest_netbench._errors",
    "ToolNotInstalled": "pytest_netbench._errors",
    "ToolFailed": "pytest_netbench._errors",
}


def publish(namespace: dict[str, Any]) -> None:
    """Give the public classes and functions defined in ``namespace`` (a module's
    ``globals()``, passed at its very end) the package as their ``__module__``.

    A class's string annotations (``from __future__ import annotations``) are resolved
    here, in the namespace that defines them where they can be, so ``typing.get_type_hints``
    keeps working once ``__module__`` no longer names that namespace."""
    here = namespace["__name__"]
    for name, module in PUBLIC.items():
        if module != here:
            continue
        value = namespace[name]
        if isinstance(value, type):
            _resolve_annotations(value, namespace)
        if isinstance(value, type | FunctionType):
            value.__module__ = PACKAGE


def _resolve_annotations(cls: type, namespace: dict[str, Any]) -> None:
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (changed in place)
    for field, annotation in annotations.items():
        if isinstance(annotation, str):
            try:
                annotations[field] = eval(annotation, namespace)
            except Exception:  # a name imported only for type checkers: left as written
                continue
