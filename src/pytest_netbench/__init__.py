"""pytest-netbench: performance tests of network servers as ordinary pytest tests.

The library never imports pytest; the plugin lives in :mod:`pytest_netbench.plugin`.
The public names are one table, :data:`pytest_netbench._public.PUBLIC`; each loads on first
use, so the plugin costs a pytest run nothing it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_netbench._public import PUBLIC
from pytest_netbench._version import VERSION

__version__ = VERSION

if TYPE_CHECKING:
    # The table again, as imports, for type checkers and editors: the names re-exported
    # (``as`` themselves), with their types. tests/unit/test_exported_members.py holds it to
    # PUBLIC, and its failure message is the line to add here.
    from pytest_netbench._compare.metric_verdict import MetricComparison as MetricComparison
    from pytest_netbench._compare.metric_verdict import compare_values as compare_values
    from pytest_netbench._compare.metrics import metric_value as metric_value
    from pytest_netbench._compare.thresholds import Threshold as Threshold
    from pytest_netbench._compare.thresholds import parse_thresholds as parse_thresholds
    from pytest_netbench._errors import BuildFailed as BuildFailed
    from pytest_netbench._errors import FeederExhausted as FeederExhausted
    from pytest_netbench._errors import FlowError as FlowError
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
    from pytest_netbench._flow.api import flow as flow
    from pytest_netbench._flow.api import flow_async as flow_async
    from pytest_netbench._flow.lean import LeanClient as LeanClient
    from pytest_netbench._flow.lean import LeanRequestError as LeanRequestError
    from pytest_netbench._flow.lean import LeanResponse as LeanResponse
    from pytest_netbench._flow.lean import LeanStatusError as LeanStatusError
    from pytest_netbench._flow.scenario import FlowScenario as FlowScenario
    from pytest_netbench._flow.steps import step as step
    from pytest_netbench._flow.think import ThinkTime as ThinkTime
    from pytest_netbench._flow.think import think as think
    from pytest_netbench._input.grpc import grpc_spec as grpc_spec
    from pytest_netbench._input.grpc_schema import (
        grpc_message_from_json as grpc_message_from_json,
    )
    from pytest_netbench._input.mix_file import load_mix as load_mix
    from pytest_netbench._input.options import EchoOptions as EchoOptions
    from pytest_netbench._input.options import HttpOptions as HttpOptions
    from pytest_netbench._input.options import LlmOptions as LlmOptions
    from pytest_netbench._input.options import WsOptions as WsOptions
    from pytest_netbench._input.spec import echo_spec as echo_spec
    from pytest_netbench._input.spec import http_spec as http_spec
    from pytest_netbench._input.spec import ws_spec as ws_spec
    from pytest_netbench._load.api import echo_load as echo_load
    from pytest_netbench._load.api import echo_load_async as echo_load_async
    from pytest_netbench._load.api import grpc_load as grpc_load
    from pytest_netbench._load.api import http_load as http_load
    from pytest_netbench._load.api import http_load_async as http_load_async
    from pytest_netbench._load.api import llm_load as llm_load
    from pytest_netbench._load.api import run_spec as run_spec
    from pytest_netbench._load.api import sse_load as sse_load
    from pytest_netbench._load.api import ws_load as ws_load
    from pytest_netbench._load.api import ws_load_async as ws_load_async
    from pytest_netbench._load.scenarios import Scenario as Scenario
    from pytest_netbench._load.scenarios import ScenariosResult as ScenariosResult
    from pytest_netbench._load.scenarios import run_scenarios as run_scenarios
    from pytest_netbench._model import feeders as feeders
    from pytest_netbench._model.checks import Check as Check
    from pytest_netbench._model.checks import CheckStats as CheckStats
    from pytest_netbench._model.kinds import ERROR_KINDS as ERROR_KINDS
    from pytest_netbench._model.live import HostProgress as HostProgress
    from pytest_netbench._model.live import LoadProgress as LoadProgress
    from pytest_netbench._model.live import StopSignal as StopSignal
    from pytest_netbench._model.phases import Phases as Phases
    from pytest_netbench._model.profile import FunctionCost as FunctionCost
    from pytest_netbench._model.profile import ServerProfile as ServerProfile
    from pytest_netbench._model.requests import RequestStats as RequestStats
    from pytest_netbench._model.result import LoadResult as LoadResult
    from pytest_netbench._model.sections import GeneratorStats as GeneratorStats
    from pytest_netbench._model.sections import LatencySummary as LatencySummary
    from pytest_netbench._model.sections import ProbeStats as ProbeStats
    from pytest_netbench._model.sections import ServerStats as ServerStats
    from pytest_netbench._model.sections import ShareStats as ShareStats
    from pytest_netbench._model.sections import TimelineRow as TimelineRow
    from pytest_netbench._model.sessions import SessionStats as SessionStats
    from pytest_netbench._model.spec import LoadSpec as LoadSpec
    from pytest_netbench._model.spec import Request as Request
    from pytest_netbench._model.stages import Stage as Stage
    from pytest_netbench._model.streams import EventCounts as EventCounts
    from pytest_netbench._model.streams import StreamStats as StreamStats
    from pytest_netbench._proto.source import preview as preview
    from pytest_netbench._servers import catalog as catalog
    from pytest_netbench._servers.launcher import Server as Server
    from pytest_netbench._servers.readiness import AllReady as AllReady
    from pytest_netbench._servers.readiness import CallableReady as CallableReady
    from pytest_netbench._servers.readiness import Http2Ready as Http2Ready
    from pytest_netbench._servers.readiness import HttpReady as HttpReady
    from pytest_netbench._servers.readiness import LogReady as LogReady
    from pytest_netbench._servers.readiness import ReadinessCheck as ReadinessCheck
    from pytest_netbench._servers.readiness import ReadinessContext as ReadinessContext
    from pytest_netbench._servers.readiness import TcpReady as TcpReady
    from pytest_netbench._servers.sampling import ProcessTreeSampler as ProcessTreeSampler
    from pytest_netbench._servers.spec import ServerSpec as ServerSpec
else:
    # Hidden from type checkers, which read the re-exports above (a computed __all__ would
    # hide them all from mypy).
    __all__ = ["__version__", *PUBLIC]


def __getattr__(name: str) -> Any:
    module_name = PUBLIC.get(name)
    if module_name is None:
        raise AttributeError(f"module 'pytest_netbench' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    if module_name.endswith(f".{name}") and not hasattr(module, name):
        value: Any = module  # ``catalog``: the module is the export
    else:
        value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(["__version__", *PUBLIC])
