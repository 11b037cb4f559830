"""What the ``netbench`` fixture gives a test: loads and experiments, run and recorded.

:class:`NetbenchFixture` holds no measurement logic. It scales the options, builds the
spec through the library (so bad arguments fail before any traffic), and hands the rest
to the experiment layer: trials and their median, reruns of runs the generator spoiled,
A/B trials in ABBA order, sweeps and capacity searches. Its own part is the runner each of
those calls for every load (the measured window, the managed server's sampling) and the
records it adds to the test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import pytest

from pytest_netbench._plugin.failing import (
    cause_traceback,
    fail_if_invalid,
    fail_if_unusable,
    fail_test,
)
from pytest_netbench._plugin.recording import PluginRunner, record_experiment, record_load
from pytest_netbench._plugin.session import AbPair, NetbenchSession
from pytest_netbench._plugin.test_state import (
    EXPERIMENTS_KEY,
    LOADS_KEY,
    LOOKS_KEY,
    ShownLoad,
    servers_of,
)

if TYPE_CHECKING:
    from pytest_netbench._compare.records import ExperimentKind
    from pytest_netbench._experiment.capacity import CapacityOptions, CapacityResult
    from pytest_netbench._experiment.cold_start import ColdStartOptions, ColdStartResult
    from pytest_netbench._experiment.crosscheck import CrosscheckOptions, CrosscheckResult
    from pytest_netbench._experiment.sweep import SweepOptions, SweepResult
    from pytest_netbench._experiment.trials import AbResult, TrialsResult
    from pytest_netbench._input.grpc import SupportsSerialize
    from pytest_netbench._input.options import EchoOptions, HttpOptions, LlmOptions, WsOptions
    from pytest_netbench._load.attempts import Attempts, Runner
    from pytest_netbench._load.scenarios import Scenario
    from pytest_netbench._model import LoadResult, LoadSpec
    from pytest_netbench._servers.launcher import Server

T = TypeVar("T")
Experiment = TypeVar(
    "Experiment", "SweepResult", "CapacityResult", "ColdStartResult", "CrosscheckResult"
)


class NetbenchFixture:
    """What the ``netbench`` fixture gives a test: ``.http()`` and ``.echo()`` loads,
    ``.flow()`` user flows, and the ``.sweep()``, ``.capacity()``, ``.cold_start()`` and
    ``.crosscheck()`` experiments."""

    def __init__(self, item: pytest.Item, session: NetbenchSession) -> None:
        self._item = item
        self._session = session
        self.results: list[LoadResult] = []
        self.experiments: list[
            SweepResult | CapacityResult | ColdStartResult | CrosscheckResult
        ] = []

    # -- loads ---------------------------------------------------------------------------------
    def http(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        cluster: object | None = None,
        profile: bool | None = None,
        **options: Unpack[HttpOptions],
    ) -> LoadResult:
        """Drive HTTP load at ``url`` (a URL, or a server the test started; the options
        as ``http_load``'s) and record the result. ``profile``: profile the server in a
        run of its own after the measured ones (default: ``--netbench-profile``)."""
        from pytest_netbench._input.spec import http_spec

        target, server = self._target(url, server)
        spec = self._checked(lambda: http_spec(target, **options))
        profiled = self._session.settings.profile if profile is None else profile
        return self._run(
            spec,
            server,
            label,
            allow_invalid,
            self._retries(retries, allow_invalid),
            cluster,
            profile=profiled,
        )

    def scenarios(
        self,
        url: str | Server,
        scenarios: Mapping[str, Scenario],
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
    ) -> LoadResult:
        """Several named loads at once against ``url`` (``run_scenarios``), recorded as one
        load: the returned result is all of them together, each scenario one entry of its
        ``by_request`` (so the session's per-request tables show them, and
        ``by_request.NAME.p99_ms`` names one in ``--netbench-metrics`` and thresholds)."""
        from pytest_netbench._load.scenarios import run_scenarios, scenario_specs

        target, server = self._target(url, server)
        # The first scenario's spec stands for the load: its server, trials and reruns.
        spec = self._checked(lambda: next(iter(scenario_specs(target, scenarios).values())))

        scale = self._session.settings.scale

        def run_load(spec: LoadSpec, srv: Server | None) -> LoadResult:
            host = f"[{spec.host}]" if ":" in spec.host else spec.host
            base = f"{spec.scheme}://{host}:{spec.port}"
            return run_scenarios(base, scenarios, scale=scale, server=srv).total

        tries = self._retries(retries, allow_invalid)
        return self._run(spec, server, label, allow_invalid, tries, run_load=run_load)

    def sse(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        cluster: object | None = None,
        **options: Unpack[HttpOptions],
    ) -> LoadResult:
        """Streams of server-sent events at ``url``, each read as it arrives (the options
        as ``sse_load``'s: ``stream="chunks"`` for a body that is not SSE), recorded like
        :meth:`http`; the figures are ``result.stream``."""
        from pytest_netbench._input.spec import http_spec

        options.setdefault("stream", "sse")
        target, server = self._target(url, server)
        spec = self._checked(lambda: http_spec(target, **options))
        return self._run(
            spec, server, label, allow_invalid, self._retries(retries, allow_invalid), cluster
        )

    def llm(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        **options: Unpack[LlmOptions],
    ) -> LoadResult:
        """Token streams from an OpenAI-compatible server at ``url`` (the endpoint's URL;
        ``server=`` the managed server behind it), the options as ``llm_load``'s, recorded
        like :meth:`http`; the figures are ``result.stream``."""
        from contextlib import ExitStack

        from pytest_netbench._load.api import llm_spec

        target, server = self._target(url, server)
        with ExitStack() as stack:
            spec = self._checked(lambda: stack.enter_context(llm_spec(target, **options)))
            return self._run(
                spec, server, label, allow_invalid, self._retries(retries, allow_invalid), None
            )

    def echo(
        self,
        host: str | Server,
        port: int | None = None,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        cluster: object | None = None,
        **options: Unpack[EchoOptions],
    ) -> LoadResult:
        """Raw TCP echo load at ``host``, ``port`` (or a server the test started; the
        options as ``echo_load``'s), recorded like :meth:`http`."""
        from pytest_netbench._input.spec import echo_spec

        host, port, server = self._address(host, port, server)
        spec = self._checked(lambda: echo_spec(host, port, **options))
        return self._run(
            spec, server, label, allow_invalid, self._retries(retries, allow_invalid), cluster
        )

    def ws(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        cluster: object | None = None,
        **options: Unpack[WsOptions],
    ) -> LoadResult:
        """WebSocket message round trips at ``url`` (``ws://...``, or a server the test
        started: its ``/`` over ``ws://``; the options as ``ws_load``'s), recorded like
        :meth:`http`."""
        from pytest_netbench._input.spec import ws_spec

        target, server = self._target(url, server)
        if not isinstance(url, str):
            target = "ws://" + target.partition("://")[2]  # a server's URL is its http:// one
        spec = self._checked(lambda: ws_spec(target, **options))
        return self._run(
            spec, server, label, allow_invalid, self._retries(retries, allow_invalid), cluster
        )

    def grpc(
        self,
        url: str | Server,
        method: str,
        /,
        message: bytes | SupportsSerialize = b"",
        *,
        deadline: float | None = None,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        cluster: object | None = None,
        **options: Unpack[HttpOptions],
    ) -> LoadResult:
        """gRPC unary calls to ``method`` at ``url`` (or a server the test started; the
        options as ``grpc_load``'s), recorded like :meth:`http`."""
        from pytest_netbench._input.grpc import grpc_spec

        target, server = self._target(url, server)
        spec = self._checked(
            lambda: grpc_spec(target, method, message, deadline=deadline, **options)
        )
        return self._run(
            spec, server, label, allow_invalid, self._retries(retries, allow_invalid), cluster
        )

    def flow(
        self,
        flow_function: Callable[[Any], Awaitable[Any]] | Mapping[Any, int],
        url: str | Server,
        *,
        users: int = 10,
        duration: float | None = None,
        sessions: int | None = None,
        client: str = "httpx",
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        cluster: object | None = None,
        **options: Any,
    ) -> LoadResult:
        """Virtual users running ``flow_function`` (an async function of a client, or
        several in a mapping to their weights)
        against ``url`` (a URL, or a server the test started), recorded like :meth:`http`;
        the options as ``flow``'s (``client``, ``warmup``, ``timeout``, ``connect_timeout``,
        ``loop``, ``seed``). ``duration`` and ``sessions`` are scaled by ``--netbench-scale``."""
        from pytest_netbench._flow.api import (
            check_client,
            check_flow_options,
            flow_spec,
            run_flow_spec,
            scale_sessions,
        )

        target, server = self._target(url, server)
        scale = self._session.settings.scale
        sessions = scale_sessions(sessions, users if isinstance(users, int) else 1, scale)
        counted: list[int | None] = []

        def build() -> LoadSpec:
            check_client(client)
            check_flow_options(options)
            spec, count = flow_spec(
                target, users=users, duration=duration, sessions=sessions, **options
            )
            counted.append(count)
            return spec

        spec = self._checked(build)

        def run_load(spec: LoadSpec, srv: Server | None) -> LoadResult:
            return run_flow_spec(
                flow_function, spec, counted[0], server=srv, client=client, cluster=cluster
            )

        tries = self._retries(retries, allow_invalid)
        return self._run(spec, server, label, allow_invalid, tries, run_load=run_load)

    # -- experiments ---------------------------------------------------------------------------
    # Each takes its experiment's own options and the load's in one TypedDict of the
    # experiment's module; what is not given takes the library's default.
    def sweep(
        self,
        url: str | Server,
        *,
        rates: str | Sequence[float],
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        **options: Unpack[SweepOptions],
    ) -> SweepResult:
        """One open-loop load per rate in ``rates`` (``"100:2000:100"``, ``"100,200"`` or a
        list) at ``url``; ``stop_p99_ms``/``stop_error_rate`` end it past saturation, the
        rest are ``http_load``'s options (``duration`` is each step's, scaled)."""
        from pytest_netbench._experiment.sweep import SweepBounds, sweep

        own, load = _split(options, SweepBounds)
        return self._experiment(
            "sweep",
            lambda spec, tries, runner: sweep(
                spec, rates=rates, retries=tries, runner=runner, **own
            ),
            url,
            load,
            server=server,
            label=label,
            allow_invalid=allow_invalid,
            retries=retries,
            own=sweep,
        )

    def capacity(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        **options: Unpack[CapacityOptions],
    ) -> CapacityResult:
        """The highest open-loop rate at ``url`` that meets ``slo``: the search's own
        options (as ``capacity``'s) and ``http_load``'s (``duration`` is each step's,
        scaled)."""
        from pytest_netbench._experiment.capacity import CapacitySearch, capacity

        own, load = _split(options, CapacitySearch)
        return self._experiment(
            "capacity",
            lambda spec, tries, runner: capacity(spec, retries=tries, runner=runner, **own),
            url,
            load,
            server=server,
            label=label,
            allow_invalid=allow_invalid,
            retries=retries,
            own=capacity,
        )

    def cold_start(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        **options: Unpack[ColdStartOptions],
    ) -> ColdStartResult:
        """One closed-loop run from the server's very first request, no warm-up, its
        timeline at ``resolution`` (0.1 s): the first second's rate against the steady one,
        and when it settled. Give it a server no load has warmed yet. ``duration`` (default
        10 s, scaled) and ``http_load``'s options; no reruns unless ``retries=`` says so (a
        rerun meets the server the first run warmed)."""
        from pytest_netbench._experiment.cold_start import (
            DEFAULT_RESOLUTION_S,
            Settling,
            cold_start,
        )

        own, load = _split(options, Settling)
        for name, instead in (("requests", "duration="), ("timeline_resolution", "resolution=")):
            if name in load:
                fail_test(f"netbench: a cold start takes no {name}=: use {instead}")
        resolution = own.get("resolution", DEFAULT_RESOLUTION_S)
        scaled = self._session.settings.scale != 1.0

        def run(spec: LoadSpec, tries: int, runner: Runner) -> ColdStartResult:
            if scaled:
                spec = _on_grid(spec, resolution)
            return cold_start(spec, retries=tries, runner=runner, **own)

        return self._experiment(
            "cold_start",
            run,
            url,
            load,
            server=server,
            label=label,
            allow_invalid=allow_invalid,
            retries=0 if retries is None else retries,
            own=cold_start,
        )

    def crosscheck(
        self,
        url: str | Server,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        retries: int | None = None,
        **options: Unpack[CrosscheckOptions],
    ) -> CrosscheckResult:
        """The same closed-loop load measured by netbench, then by ``tool`` (``"wrk"``:
        ``duration`` in whole seconds, 10 s by default; ``"ab"``: ``requests=``;
        ``"h2load"``: an HTTP/2 load, ``protocol="h2"`` by default, as wrk's), recorded
        with both tools' figures and their ratio. Skips the test when the tool is not
        installed; ``http_load``'s options otherwise (scaled, then rounded for the tool)."""
        from pytest_netbench._errors import ToolNotInstalled
        from pytest_netbench._experiment.crosscheck import (
            DEFAULT_TOOL,
            DEFAULT_WARMUP_S,
            SecondTool,
            crosscheck,
        )
        from pytest_netbench._experiment.tool_runs import fitted, require
        from pytest_netbench._input.spec import DEFAULT_DURATION_S

        own, load = _split(options, SecondTool)
        tool = str(own.get("tool", DEFAULT_TOOL))
        try:
            require(tool)
        except ToolNotInstalled as exc:
            pytest.skip(f"netbench crosscheck: {exc}")
        except ValueError as exc:
            fail_test(f"netbench: {exc}")
        if tool == "h2load":
            load.setdefault("protocol", "h2")  # h2load's crosscheck is of an HTTP/2 load
        if tool in ("wrk", "h2load") and load.get("requests") is None:
            load.setdefault("duration", DEFAULT_DURATION_S)
        load.setdefault("warmup", DEFAULT_WARMUP_S)  # before both tools (crosscheck's doc)
        bracket = own.get("bracket", True)

        def run(spec: LoadSpec, tries: int, runner: Runner) -> CrosscheckResult:
            return crosscheck(
                fitted(tool, spec), tool=tool, bracket=bracket, retries=tries, runner=runner
            )

        return self._experiment(
            "crosscheck",
            run,
            url,
            load,
            server=server,
            label=label,
            allow_invalid=allow_invalid,
            retries=retries,
            own=crosscheck,
        )

    # -- steps ---------------------------------------------------------------------------------
    def _target(self, target: str | Server, server: Server | None) -> tuple[str, Server | None]:
        """A URL and the managed server behind it, from either."""
        from pytest_netbench._servers.launcher import Server

        if isinstance(target, Server):
            if server is not None and server is not target:
                fail_test("netbench: give the server once: as the target or as server=, not both")
            return target.url, target
        if not isinstance(target, str):
            fail_test(
                f"netbench: the target must be a URL or a server (from netbench_server or the"
                f" server fixture), got {type(target).__name__}"
            )
        return target, server

    def _address(
        self, host: str | Server, port: int | None, server: Server | None
    ) -> tuple[str, int, Server | None]:
        """A host, a port and the managed server behind them, from either."""
        from pytest_netbench._servers.launcher import Server

        if isinstance(host, Server):
            if port is not None:
                fail_test("netbench: give a server, or a host and a port, not both")
            if server is not None and server is not host:
                fail_test("netbench: give the server once: as the target or as server=, not both")
            return host.host, int(host.port or 0), host
        if port is None:
            fail_test("netbench: echo(host, port) needs a port (or pass a server)")
        return host, port, server

    def _checked(self, build: Callable[[], LoadSpec]) -> LoadSpec:
        from pytest_netbench._errors import NetbenchError
        from pytest_netbench._input.spec import scale_spec

        try:
            return scale_spec(build(), self._session.settings.scale)
        except (NetbenchError, TypeError, ValueError) as exc:
            problem = f"netbench: {exc}"
        # Failing outside the except block keeps the library's traceback out of the report.
        fail_test(problem)

    def _retries(self, retries: int | None, allow_invalid: bool) -> int:
        """How many times a spoiled load may run again: the call's ``retries=``, else none
        when the test takes an invalid result (``allow_invalid=True`` asks about the run it
        gets, so it gets that one), else the session's setting."""
        from pytest_netbench._errors import SpecError
        from pytest_netbench._load.attempts import DEFAULT_RETRIES, check_retries

        if retries is None and allow_invalid:
            return 0
        chosen = retries if retries is not None else self._session.settings.retries
        if chosen is None:
            return DEFAULT_RETRIES
        try:
            check_retries(chosen)
        except SpecError as exc:
            problem = f"netbench: {exc}"
        else:
            return chosen
        fail_test(problem)

    def _guarded(self, call: Callable[[], T]) -> T:
        """Run the experiment layer; a deliberate error fails the test with its message."""
        from pytest_netbench._errors import NetbenchError, SpecError

        try:
            return call()
        except SpecError as exc:
            problem = f"netbench: {exc}"
        except NetbenchError as exc:
            problem = f"netbench: {type(exc).__name__}: {exc}" + cause_traceback(exc)
        fail_test(problem)

    def _server_for(self, spec: LoadSpec) -> Server | None:
        """The managed server the load targets, so its process tree gets sampled."""
        for srv in servers_of(self._item):
            if srv.port == spec.port and _same_host(srv.host, spec.host):
                return srv
        return None

    def _arms(
        self, spec: LoadSpec, server: Server | None
    ) -> tuple[AbPair | None, list[tuple[str | None, LoadSpec, Server | None]]]:
        """The servers a load goes to: the one, or in A/B mode both arms of its pair."""
        server = server if server is not None else self._server_for(spec)
        pair = self._session.ab_pairs.get(id(server)) if server is not None else None
        if pair is None:
            return None, [(None, spec, server)]
        return pair, [
            (arm, dataclasses.replace(spec, host=srv.host, port=int(srv.port or 0)), srv)
            for arm, srv in (("base", pair.base), ("head", pair.head))
        ]

    # -- running loads -------------------------------------------------------------------------
    def _run(
        self,
        spec: LoadSpec,
        server: Server | None,
        label: str,
        allow_invalid: bool,
        retries: int,
        cluster: object | None = None,
        run_load: Callable[[LoadSpec, Server | None], LoadResult] | None = None,
        *,
        profile: bool = False,
    ) -> LoadResult:
        from pytest_netbench._experiment.trials import Arm
        from pytest_netbench._plugin import sequential_trials

        settings = self._session.settings
        pair, arms = self._arms(spec, server)
        cluster = cluster if cluster is not None else settings.cluster
        runners = {
            arm: PluginRunner(self._session.window, srv, cluster=cluster, run_load=run_load)
            for arm, _s, srv in arms
        }
        tested: TrialsResult
        ran: list[tuple[str | None, int, Attempts]]
        looks = self._item.stash.setdefault(LOOKS_KEY, [])
        if pair is None:
            runner = runners[None]
            key = f"{self._item.nodeid}#{label}" if label else self._item.nodeid
            done = self._guarded(
                lambda: sequential_trials.run(settings, key, spec, runner, retries, looks)
            )
            ran = [(None, trial, attempts) for trial, attempts in enumerate(done.trials)]
            tested = done
        else:
            base, head = (Arm(str(arm), s, runners[arm]) for arm, s, _srv in arms)
            ab = self._guarded(
                lambda: sequential_trials.run_ab(settings, base, head, retries, looks)
            )
            ran = _in_run_order(ab)
            tested = ab.b
        median = tested.median
        if profile:  # after the trials, in runs of their own: never the ones judged
            ran, median = _profiled(ran, median, {arm: (s, runners[arm]) for arm, s, _ in arms})
        for arm, trial, attempts in ran:
            self._keep(attempts, runners[arm], trial=trial, arm=arm, label=label)
        if not allow_invalid:
            # Every trial lands in the matrix and the comparison, not only the median one.
            for _arm, _trial, attempts in ran:
                fail_if_invalid(attempts)
        return median

    def _keep(
        self, attempts: Attempts, runner: PluginRunner, *, trial: int, arm: str | None, label: str
    ) -> None:
        result = attempts.kept
        self.results.append(result)
        title = _title(label or result.url, trial, arm)
        self._item.stash.setdefault(LOADS_KEY, []).append(
            ShownLoad(title, result, attempts.discarded)
        )
        record_load(
            self._item, attempts, runner.window_of(result), trial=trial, arm=arm, label=label
        )

    # -- running experiments -------------------------------------------------------------------
    def _experiment(
        self,
        kind: ExperimentKind,
        run: Callable[[LoadSpec, int, Runner], Experiment],
        target: str | Server,
        load: dict[str, Any],
        *,
        server: Server | None,
        label: str,
        allow_invalid: bool,
        retries: int | None,
        own: Callable[..., object],
    ) -> Experiment:
        """``run(spec, retries, runner)`` once (once per arm in A/B mode), recorded; a
        misspelt option is offered the closest of the load's and ``own``'s options."""
        from pytest_netbench._experiment.running import own_options
        from pytest_netbench._input.options import check_names
        from pytest_netbench._input.spec import http_spec

        url, server = self._target(target, server)

        def build() -> LoadSpec:
            check_names("http", load, also=own_options(own))
            return http_spec(url, **load)

        spec = self._checked(build)
        # Its steps are rerun as ever: allow_invalid= keeps an unusable experiment from
        # failing the test, and a step the generator spoiled still tells nothing.
        tries = self._retries(retries, allow_invalid=False)
        _pair, arms = self._arms(spec, server)
        done: list[Experiment] = []
        for arm, arm_spec, srv in arms:
            # One window around the whole experiment: its loads are one measurement, and
            # under xdist no other worker's load falls between two of its steps.
            runner = PluginRunner(
                self._session.window,
                srv,
                hold_window=False,
                cluster=self._session.settings.cluster,
            )
            with self._session.window.hold() as window:
                result = self._guarded(lambda: run(arm_spec, tries, runner))  # noqa: B023
            record = record_experiment(
                self._item, kind, result.to_dict(), window, arm=arm, label=label
            )
            title = _title(f"{label or arm_spec.url}", 0, arm)
            self._item.stash.setdefault(EXPERIMENTS_KEY, []).append((title, record))
            self.experiments.append(result)
            done.append(result)
        if not allow_invalid:
            for result in done:
                fail_if_unusable(result)
        return done[-1]


# -- helpers -----------------------------------------------------------------------------------
def _split(options: Mapping[str, Any], own: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The experiment's own options (the keys of the TypedDict ``own``), and the load's."""
    names = own.__required_keys__ | own.__optional_keys__
    mine = {k: v for k, v in options.items() if k in names}
    return mine, {k: v for k, v in options.items() if k not in names}


def _profiled(
    ran: list[tuple[str | None, int, Attempts]],
    median: LoadResult,
    arms: dict[str | None, tuple[LoadSpec, PluginRunner]],
) -> tuple[list[tuple[str | None, int, Attempts]], LoadResult]:
    """Each arm's median trial with its server's profile, from one more run of its own
    (``with_profile``); the result the test gets (the tested arm's median) likewise."""
    from pytest_netbench._experiment.trials import median_trial

    out = list(ran)
    for arm, (spec, runner) in arms.items():
        kept = [attempts.kept for name, _t, attempts in ran if name == arm]
        if not kept:
            continue
        middle = median_trial(kept)
        with_it = runner.profiled(spec, middle)
        out = [
            (name, t, dataclasses.replace(a, kept=with_it) if a.kept is middle else a)
            for name, t, a in out
        ]
        if middle is median:
            median = with_it
    return out, median


def _in_run_order(ab: AbResult) -> list[tuple[str | None, int, Attempts]]:
    """(arm, trial, attempts) in the order the loads ran (ABBA)."""
    sides = {ab.names[0]: ab.a, ab.names[1]: ab.b}
    taken = dict.fromkeys(sides, 0)
    ran: list[tuple[str | None, int, Attempts]] = []
    for name in ab.order:
        trial = taken[name]
        taken[name] += 1
        ran.append((name, trial, sides[name].trials[trial]))
    return ran


def _on_grid(spec: LoadSpec, resolution: float) -> LoadSpec:
    """A scaled duration made a whole number of timeline rows again (0.25 s of 0.1 s rows:
    0.2 s), as a cold start's timeline needs full rows."""
    if spec.duration_s is None:
        return spec
    rows = max(1, round(spec.duration_s / resolution))
    return dataclasses.replace(spec, duration_s=rows * resolution)


def _same_host(a: str, b: str) -> bool:
    loopback = {"127.0.0.1", "localhost"}
    return a == b or (a in loopback and b in loopback)


def _title(name: str, trial: int, arm: str | None) -> str:
    parts = [name]
    if arm:
        parts.append(arm)
    if trial:
        parts.append(f"trial {trial + 1}")
    return ", ".join(parts)
