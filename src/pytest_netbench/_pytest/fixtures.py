"""The fixtures tests use: ``netbench`` (run and record loads), ``netbench_server`` (a
factory) and ``server`` (one server per indirect parameter, scope chosen by the user).

The fixture objects hold no measurement logic: they scale the spec, take the measured
window, call the library, and record what came back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_netbench._pytest.options import ScopeName
from pytest_netbench._pytest.records import ARM_PARAM, function_id, param_strings, to_property
from pytest_netbench._pytest.servers import describe, start_server
from pytest_netbench._pytest.session import SKIP_REASON, AbPair, NetbenchSession, get_session

if TYPE_CHECKING:
    from pytest_netbench._api import Monitored
    from pytest_netbench._model import LoadResult, LoadSpec
    from pytest_netbench._servers.launcher import Server

# Results and servers of the running test, for the failure report.
RESULTS_KEY = pytest.StashKey[list[tuple[str, "LoadResult"]]]()
SERVERS_KEY = pytest.StashKey[list["Server"]]()
DEFAULT_DURATION_S = 10.0


class NetbenchFixture:
    """What the ``netbench`` fixture gives a test: ``.http()`` and ``.echo()``."""

    def __init__(self, item: pytest.Item, session: NetbenchSession) -> None:
        self._item = item
        self._session = session
        self.results: list[LoadResult] = []

    def http(
        self,
        url: str,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        **options: Any,
    ) -> LoadResult:
        """Drive HTTP load at ``url`` (options as ``http_load``) and record the result."""
        from pytest_netbench._api import http_spec

        spec = self._checked(lambda: http_spec(url, **self._scaled(options)))
        return self._run(spec, server, label, allow_invalid)

    def echo(
        self,
        host: str,
        port: int,
        *,
        server: Server | None = None,
        label: str = "",
        allow_invalid: bool = False,
        **options: Any,
    ) -> LoadResult:
        """Raw TCP echo load (options as ``echo_load``), recorded like :meth:`http`."""
        from pytest_netbench._api import tcp_spec

        spec = self._checked(lambda: tcp_spec(host, port, **self._scaled(options)))
        return self._run(spec, server, label, allow_invalid)

    # -- steps ---------------------------------------------------------------------------------
    def _scaled(self, options: dict[str, Any]) -> dict[str, Any]:
        scale = self._session.settings.scale
        if scale == 1.0:
            return options
        out = dict(options)
        if out.get("duration") is None and out.get("requests") is None:
            out["duration"] = DEFAULT_DURATION_S
        if out.get("duration") is not None:
            out["duration"] = float(out["duration"]) * scale
        if out.get("requests") is not None:
            out["requests"] = max(1, round(int(out["requests"]) * scale))
        if out.get("warmup"):
            out["warmup"] = float(out["warmup"]) * scale
        return out

    def _checked(self, build: Callable[[], LoadSpec]) -> LoadSpec:
        from pytest_netbench._errors import NetbenchError

        try:
            return build()
        except (NetbenchError, TypeError) as exc:
            problem = f"netbench: {exc}"
        # Failing outside the except block keeps the library's traceback out of the report.
        pytest.fail(problem, pytrace=False)

    def _run(
        self, spec: LoadSpec, server: Server | None, label: str, allow_invalid: bool
    ) -> LoadResult:
        server = server if server is not None else self._server_for(spec)
        pair = self._session.ab_pairs.get(id(server)) if server is not None else None
        if pair is not None:
            result = self._run_ab(spec, pair, label)
        else:
            trials = [self._measure(spec, server, label, t, None) for t in self._trials()]
            result = median_trial(trials)
        if not allow_invalid:
            self._fail_if_invalid(result)
        return result

    def _run_ab(self, spec: LoadSpec, pair: AbPair, label: str) -> LoadResult:
        arms = (("base", pair.base), ("head", pair.head))
        by_arm: dict[str, list[LoadResult]] = {"base": [], "head": []}
        for trial in self._trials():
            # ABBA order: drift over the session (heat, other load) hits both arms alike.
            order = arms if trial % 2 == 0 else arms[::-1]
            for arm, srv in order:
                arm_spec = dataclasses.replace(spec, host=srv.host, port=int(srv.port or 0))
                by_arm[arm].append(self._measure(arm_spec, srv, label, trial, arm))
        for result in by_arm["base"]:
            self._fail_if_invalid(result)
        return median_trial(by_arm["head"])

    def _trials(self) -> range:
        return range(self._session.settings.trials)

    def _measure(
        self, spec: LoadSpec, server: Server | None, label: str, trial: int, arm: str | None
    ) -> LoadResult:
        from pytest_netbench._api import run_spec
        from pytest_netbench._errors import NetbenchError
        from pytest_netbench._report.matrix import Record

        problem = ""
        try:
            with self._session.window.hold() as window:
                # Server.monitor()'s sampler returns itself from start(); _api's protocol
                # says None, so mypy needs telling that a Server is Monitored.
                result = run_spec(spec, cast("Monitored | None", server))
        except NetbenchError as exc:
            problem = f"netbench: {type(exc).__name__}: {exc}"
        if problem:
            pytest.fail(problem, pytrace=False)
        self.results.append(result)
        name = label or spec.url
        self._item.stash.setdefault(RESULTS_KEY, []).append(
            (_result_title(name, trial, arm), result)
        )
        params = param_strings(_callspec_params(self._item))
        if arm is not None:
            # The test's own `server` parameter was replaced by the A/B pair.
            params.pop("server", None)
            params[ARM_PARAM] = arm
        record = Record(
            nodeid=self._item.nodeid,
            function=function_id(self._item.nodeid),
            params=params,
            trial=trial,
            started=window.started,
            ended=window.ended,
            result=result,
            label=label,
        )
        self._item.user_properties.append(to_property(record))
        return result

    def _server_for(self, spec: LoadSpec) -> Server | None:
        """The managed server the load targets, so its process tree gets sampled."""
        for srv in servers_of(self._item):
            if srv.port == spec.port and _same_host(srv.host, spec.host):
                return srv
        return None

    def _fail_if_invalid(self, result: LoadResult) -> None:
        if result.valid:
            return
        reasons = "\n  - ".join(result.invalid_reasons) or "(no reason given)"
        pytest.fail(
            f"netbench: the result for {result.url} is INVALID, its figures cannot be trusted:"
            f"\n  - {reasons}\n(pass allow_invalid=True to assert on it anyway)",
            pytrace=False,
        )


def median_trial(results: list[LoadResult]) -> LoadResult:
    """The trial with the median throughput (the lower middle one for an even count)."""
    ranked = sorted(results, key=lambda r: r.rps)
    return ranked[(len(ranked) - 1) // 2]


def servers_of(item: pytest.Item) -> list[Server]:
    """Servers this test started or received through fixtures."""
    from pytest_netbench._servers.launcher import Server

    started: list[Server] = item.stash.get(SERVERS_KEY, [])
    found = list(started)
    funcargs: dict[str, object] = getattr(item, "funcargs", {})
    found += [v for v in funcargs.values() if isinstance(v, Server) and v not in found]
    return found


def _callspec_params(item: pytest.Item) -> dict[str, object]:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def _same_host(a: str, b: str) -> bool:
    loopback = {"127.0.0.1", "localhost"}
    return a == b or (a in loopback and b in loopback)


def _result_title(name: str, trial: int, arm: str | None) -> str:
    parts = [name]
    if arm:
        parts.append(arm)
    if trial:
        parts.append(f"trial {trial + 1}")
    return ", ".join(parts)


# -- fixtures ----------------------------------------------------------------------------------
def _require_enabled(config: pytest.Config) -> NetbenchSession:
    session = get_session(config)
    if not session.settings.enabled:
        pytest.skip(SKIP_REASON)
    return session


@pytest.fixture
def netbench(request: pytest.FixtureRequest) -> NetbenchFixture:
    """Run loads and record them against this test: ``netbench.http(url, requests=...)``."""
    session = _require_enabled(request.config)
    return NetbenchFixture(request.node, session)


@pytest.fixture
def netbench_server(request: pytest.FixtureRequest) -> Iterator[Callable[..., Server]]:
    """Factory: ``netbench_server("tornado")`` or ``netbench_server(["./hello", "{port}"])``
    gives a started, ready Server, stopped when the test ends."""
    _require_enabled(request.config)
    started: list[Server] = []

    def factory(ref: object, **server_kwargs: Any) -> Server:
        srv = _start_or_fail(ref, server_kwargs)
        started.append(srv)
        request.node.stash.setdefault(SERVERS_KEY, []).append(srv)
        return srv

    yield factory
    for srv in reversed(started):
        srv.stop()


def make_server_fixture(
    ref: object = None, *, scope: str = "function", name: str | None = None, **server_kwargs: Any
) -> Any:
    """Declare a server fixture of your own scope, e.g. in a conftest.py::

        tornado = make_server_fixture("tornado", scope="module")
        server = make_server_fixture(scope="session")  # from indirect parametrisation

    With ``ref=None`` the server comes from ``request.param``.
    """

    def _fixture(request: pytest.FixtureRequest) -> Iterator[Server]:
        yield from _server_from_request(request, ref, server_kwargs)

    _fixture.__name__ = name or "server"
    _mark_server_fixture(_fixture)
    return pytest.fixture(scope=scope, name=name)(_fixture)  # type: ignore[call-overload]


def _server_scope(fixture_name: str, config: pytest.Config) -> ScopeName:
    return get_session(config).settings.server_scope


def _server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """The server named by an indirect parameter::

    @pytest.mark.parametrize("server", ["tornado", "go"], indirect=True)

    Scope from the ``netbench_server_scope`` ini option (default: function).
    """
    yield from _server_from_request(request, None, {})


_SERVER_FIXTURE_FLAG = "_netbench_server_fixture"


def _mark_server_fixture(func: Callable[..., object]) -> None:
    setattr(func, _SERVER_FIXTURE_FLAG, True)


def uses_netbench_server_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a server fixture of ours (and not a same-named one of its own)."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        func = getattr(defs[-1], "func", None) if defs else None
        if getattr(func, _SERVER_FIXTURE_FLAG, False):
            return True
    return False


_mark_server_fixture(_server)
server = pytest.fixture(scope=_server_scope, name="server")(_server)


def _server_from_request(
    request: pytest.FixtureRequest, ref: object, server_kwargs: dict[str, Any]
) -> Iterator[Server]:
    session = _require_enabled(request.config)
    if ref is None:
        ref = getattr(request, "param", None)
    if session.settings.ab_refs is not None:
        yield from _ab_servers(session, session.settings.ab_refs, server_kwargs)
        return
    if ref is None:
        pytest.fail(
            f"fixture {request.fixturename!r} needs a server: parametrise it with"
            f' indirect=True, e.g. @pytest.mark.parametrize("{request.fixturename}",'
            ' ["tornado"], indirect=True), or pass --netbench-ab BASE HEAD',
            pytrace=False,
        )
    srv = _start_or_fail(ref, dict(server_kwargs))
    try:
        yield srv
    finally:
        srv.stop()


def _ab_servers(
    session: NetbenchSession, refs: tuple[str, str], server_kwargs: dict[str, Any]
) -> Iterator[Server]:
    base = _start_or_fail(refs[0], dict(server_kwargs))
    try:
        head = _start_or_fail(refs[1], dict(server_kwargs))
    except BaseException:
        base.stop()
        raise
    session.ab_pairs[id(base)] = AbPair(refs[0], refs[1], base, head)
    try:
        yield base
    finally:
        session.ab_pairs.pop(id(base), None)
        head.stop()
        base.stop()


def _start_or_fail(ref: object, server_kwargs: dict[str, Any]) -> Server:
    from pytest_netbench._errors import NetbenchError

    try:
        return start_server(ref, **server_kwargs)
    except (NetbenchError, TypeError) as exc:
        problem = f"netbench: cannot start server {describe(ref)!r}: {exc}"
    pytest.fail(problem, pytrace=False)
