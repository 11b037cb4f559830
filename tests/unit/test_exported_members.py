"""The public surface is what ``__all__`` says; it comes from one table (``_public.PUBLIC``),
every public class and function reports ``pytest_netbench`` as its module, and importing
the package imports neither pytest nor the modules behind the names."""

from __future__ import annotations

import ast
import importlib
import pickle
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest_netbench
from pytest_netbench._public import PACKAGE, PUBLIC

EXPECTED = {
    "__version__",
    # one load and its result
    "http_load", "http_load_async", "echo_load", "echo_load_async", "run_spec", "http_spec",
    "echo_spec", "HttpOptions", "EchoOptions", "LoadSpec", "Request", "feeders", "preview",
    "load_mix", "Stage", "Check", "CheckStats",
    "run_scenarios", "Scenario", "ScenariosResult", "FlowScenario",
    "ws_load", "ws_load_async", "ws_spec", "WsOptions",
    "grpc_load", "grpc_spec", "grpc_message_from_json", "sse_load", "llm_load",
    "LlmOptions",
    "LoadResult",
    "LatencySummary", "GeneratorStats", "Phases", "ServerProfile", "FunctionCost",
    "ServerStats", "TimelineRow", "ERROR_KINDS", "metric_value",
    "RequestStats", "ShareStats", "ProbeStats", "StreamStats", "EventCounts",
    # user flows
    "flow", "flow_async", "think", "ThinkTime", "SessionStats", "LeanClient", "LeanResponse",
    "step",
    "LeanRequestError", "LeanStatusError",
    # a running load: live progress out, a stop request in
    "LoadProgress", "HostProgress", "StopSignal",
    # experiments, their results and the SLOs they check
    "sweep", "SweepResult", "SweepStep", "parse_rates",
    "capacity", "CapacityResult", "CapacityStep",
    "cold_start", "ColdStartResult", "Slo", "TermCheck", "parse_slo",
    # the same load measured by a second tool (wrk, ab)
    "crosscheck", "CrosscheckResult", "ToolFigures",
    # the regression gate's verdicts, usable without pytest (benchmarks/gate_false_alarm.py)
    "MetricComparison", "Threshold", "compare_values", "parse_thresholds",
    # servers under test
    "Server", "ServerSpec", "ProcessTreeSampler", "catalog", "ReadinessCheck",
    "ReadinessContext", "TcpReady", "HttpReady", "Http2Ready", "LogReady", "CallableReady",
    "AllReady",
    # errors
    "NetbenchError", "SpecError", "FeederExhausted", "FlowError", "TargetUnreachableError",
    "RemoteTargetError",
    "ResourceLimitError", "ServerError", "ServerStartupError", "ServerCrashed",
    "PortInUseError", "InterpreterNotFound", "BuildFailed", "ToolchainMissing",
    "ToolNotInstalled", "ToolFailed",
}  # fmt: skip

INIT = Path(pytest_netbench.__file__)


def test_all_is_pinned() -> None:
    assert set(pytest_netbench.__all__) == EXPECTED
    assert len(pytest_netbench.__all__) == len(EXPECTED)


def test_all_and_dir_come_from_the_table() -> None:
    assert pytest_netbench.__all__ == ["__version__", *PUBLIC]
    assert set(dir(pytest_netbench)) == set(pytest_netbench.__all__)


def type_checking_imports() -> dict[str, str]:
    """``name -> module`` of the imports under ``if TYPE_CHECKING:`` in ``__init__.py``
    (``from pytest_netbench._servers import catalog`` names the module ``..._servers.catalog``
    when that is the export)."""
    tree = ast.parse(INIT.read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.unparse(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"re-export {alias.name} as itself"
            found[alias.name] = node.module
    return found


def test_the_type_checkers_imports_are_the_table() -> None:
    # Written as PUBLIC would be: "catalog" comes from its package, as a submodule.
    written = {
        name: f"{module}.{name}" if f"{module}.{name}" == PUBLIC.get(name) else module
        for name, module in type_checking_imports().items()
    }
    missing = [
        f"    from {module} import {name} as {name}"
        for name, module in PUBLIC.items()
        if written.get(name) != module
    ]
    extra = sorted(set(written) - set(PUBLIC))
    assert not missing and not extra, (
        "src/pytest_netbench/__init__.py: the imports under TYPE_CHECKING must be PUBLIC's;"
        " add (or correct):\n" + "\n".join(missing) + f"\nremove: {extra}"
    )


def test_every_name_is_its_defining_module_s_object_and_reports_the_package() -> None:
    for name, module_name in PUBLIC.items():
        module = importlib.import_module(module_name)
        value = getattr(pytest_netbench, name)
        if isinstance(value, types.ModuleType):
            assert value is module, name
            continue
        assert value is getattr(module, name), name
        if isinstance(value, type | types.FunctionType):
            # Set by the publish(globals()) that ends the defining module.
            assert value.__module__ == PACKAGE, f"{module_name} must end with publish(globals())"
            assert value.__qualname__ == name


def test_type_hints_of_public_classes_still_resolve() -> None:
    # __module__ names the package, not where the annotations' names live; publish()
    # resolves them where they were written.
    for name in PUBLIC:
        value = getattr(pytest_netbench, name)
        if isinstance(value, type):
            typing.get_type_hints(value)


def test_a_traceback_names_the_public_path() -> None:
    code = (
        "from pytest_netbench._input.spec import http_spec\n"  # never touches pytest_netbench.X
        "http_spec('http://127.0.0.1:1/', connections=0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1].startswith("pytest_netbench.SpecError: ")


def test_results_and_errors_pickle_by_their_public_path_into_a_fresh_process() -> None:
    from pytest_netbench import SpecError, http_spec

    spec = http_spec("http://127.0.0.1:8080/", connections=3)
    payload = pickle.dumps((spec, SpecError("no")))
    assert b"_model.spec" not in payload and b"_errors" not in payload  # the public path
    code = (
        "import pickle, sys\n"
        "spec, error = pickle.loads(sys.stdin.buffer.read())\n"
        "print(type(spec).__module__, spec.connections, type(error).__name__, error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=payload, capture_output=True, check=True
    )
    assert out.stdout.decode().split() == ["pytest_netbench", "3", "SpecError", "no"]


def test_importing_the_library_imports_neither_pytest_nor_what_it_exports() -> None:
    code = (
        "import sys, pytest_netbench\n"
        "print('pytest' in sys.modules,"
        " sorted(m for m in sys.modules if m.startswith('pytest_netbench.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False ['pytest_netbench._public', 'pytest_netbench._version']"


def test_experiments_are_the_functions_not_their_modules() -> None:
    assert callable(pytest_netbench.sweep)
    assert callable(pytest_netbench.capacity)
    assert pytest_netbench.sweep.__name__ == "sweep"
    assert pytest_netbench.capacity.__name__ == "capacity"
    assert pytest_netbench.cold_start.__name__ == "cold_start"
    assert isinstance(pytest_netbench.catalog, types.ModuleType)
