"""A flow's virtual users as one scenario among several (``run_scenarios``): users logging
in and shopping beside browsing at an arrival rate, against one server."""

from __future__ import annotations

from typing import Any, Unpack

from pytest_netbench._flow.api import (
    FlowOptions,
    check_client,
    check_flow_options,
    flow_spec,
    run_flow_spec,
    scale_sessions,
)
from pytest_netbench._flow.choice import Flows, flow_choice
from pytest_netbench._input.spec import scale_spec
from pytest_netbench._load.scenarios import Prepared
from pytest_netbench._model import LoadResult
from pytest_netbench._model.live import StopSignal
from pytest_netbench._public import publish


class FlowScenario:
    """Virtual users running ``flow_function`` (as :func:`flow` runs them: ``users=``,
    ``duration=``, ``sessions=``, ``rate=``, ``client=``...) as one scenario of
    :func:`run_scenarios`, from ``start`` seconds after the first; its steps are its
    result's ``by_request``."""

    __slots__ = ("client", "flow_function", "options", "start")

    def __init__(
        self,
        flow_function: Flows,
        *,
        start: float = 0.0,
        client: str = "httpx",
        **options: Unpack[FlowOptions],
    ) -> None:
        self.flow_function = flow_function
        self.start = start
        self.client = client
        self.options: dict[str, Any] = dict(options)

    def prepare(self, base_url: str, scale: float = 1.0) -> Prepared:
        check_flow_options(self.options)
        check_client(self.client)
        flow_choice(self.flow_function)  # a plain def, or no function, refused here
        spec, sessions = flow_spec(base_url, **self.options)
        spec = scale_spec(spec, scale)
        sessions = scale_sessions(sessions, spec.connections, scale)  # as the fixture does
        flow_function, client = self.flow_function, self.client

        def run(stop: StopSignal) -> LoadResult:
            return run_flow_spec(flow_function, spec, sessions, client=client, stop=stop)

        return spec, run

    def __repr__(self) -> str:
        given = "".join(f", {k}={v!r}" for k, v in self.options.items())
        name = getattr(self.flow_function, "__name__", repr(self.flow_function))
        return f"FlowScenario({name}, start={self.start!r}{given})"


publish(globals())
