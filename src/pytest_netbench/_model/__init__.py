"""The public data model: what a load is asked to do and what it found.

Everything here is a frozen, slotted dataclass with no behaviour beyond
derived views, so results can cross process boundaries and be compared,
stored and rendered by layers that know nothing about sockets. The package splits it by
concern (the words, the spec, a result's sections, the result); import from here.
"""

from pytest_netbench._model.checks import Check as Check
from pytest_netbench._model.checks import CheckStats as CheckStats
from pytest_netbench._model.kinds import ARRIVALS as ARRIVALS
from pytest_netbench._model.kinds import ERROR_KINDS as ERROR_KINDS
from pytest_netbench._model.kinds import GENERATOR_CAUSES as GENERATOR_CAUSES
from pytest_netbench._model.kinds import HTTP_PROTOCOLS as HTTP_PROTOCOLS
from pytest_netbench._model.kinds import INVALID_CAUSES as INVALID_CAUSES
from pytest_netbench._model.kinds import LOOPS as LOOPS
from pytest_netbench._model.kinds import MIX_ORDERS as MIX_ORDERS
from pytest_netbench._model.kinds import PERCENTILE_FIELDS as PERCENTILE_FIELDS
from pytest_netbench._model.kinds import WS_ANSWERS as WS_ANSWERS
from pytest_netbench._model.kinds import Arrival as Arrival
from pytest_netbench._model.kinds import ErrorKind as ErrorKind
from pytest_netbench._model.kinds import HttpProtocol as HttpProtocol
from pytest_netbench._model.kinds import InvalidCause as InvalidCause
from pytest_netbench._model.kinds import LoopName as LoopName
from pytest_netbench._model.kinds import MixOrder as MixOrder
from pytest_netbench._model.kinds import Mode as Mode
from pytest_netbench._model.kinds import WsAnswer as WsAnswer
from pytest_netbench._model.kinds import cause_of_reason as cause_of_reason
from pytest_netbench._model.no_latency import NoLatency as NoLatency
from pytest_netbench._model.phases import PHASE_NAMES as PHASE_NAMES
from pytest_netbench._model.phases import Phases as Phases
from pytest_netbench._model.profile import FunctionCost as FunctionCost
from pytest_netbench._model.profile import ServerProfile as ServerProfile
from pytest_netbench._model.requests import RequestStats as RequestStats
from pytest_netbench._model.result import LoadResult as LoadResult
from pytest_netbench._model.result import why_no_latency as why_no_latency
from pytest_netbench._model.sections import GeneratorStats as GeneratorStats
from pytest_netbench._model.sections import LatencySummary as LatencySummary
from pytest_netbench._model.sections import ProbeStats as ProbeStats
from pytest_netbench._model.sections import ServerStats as ServerStats
from pytest_netbench._model.sections import ShareStats as ShareStats
from pytest_netbench._model.sections import TimelineRow as TimelineRow
from pytest_netbench._model.sessions import SessionStats as SessionStats
from pytest_netbench._model.spec import LoadSpec as LoadSpec
from pytest_netbench._model.spec import Request as Request
