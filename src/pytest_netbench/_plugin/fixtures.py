"""The fixtures tests use: ``netbench`` (run and record loads), ``netbench_server`` (a
factory), ``server`` (one server per indirect parameter, in the scope the user chose) and
:func:`make_server_fixture` to declare more of the latter.

Without ``--netbench`` every one of them skips the test at set-up, so a server fixture of
wide scope is never started by an ordinary run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_netbench._plugin.loads import NetbenchFixture
from pytest_netbench._plugin.options import ScopeName
from pytest_netbench._plugin.servers import describe, in_base_checkout, start_server
from pytest_netbench._plugin.session import SKIP_REASON, AbPair, NetbenchSession, get_session
from pytest_netbench._plugin.test_state import SERVERS_KEY

if TYPE_CHECKING:
    from pytest_netbench._servers.launcher import Server


def _require_enabled(config: pytest.Config) -> NetbenchSession:
    session = get_session(config)
    if not session.settings.enabled:
        pytest.skip(SKIP_REASON)
    return session


@pytest.fixture
def netbench(request: pytest.FixtureRequest) -> NetbenchFixture:
    """Run loads and experiments and record them against this test:
    ``netbench.http(url, requests=...)``, ``netbench.sweep(url, rates=...)``,
    ``netbench.capacity(url, slo=...)``."""
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
    if session.settings.ab_base_dir is not None:
        yield from _ab_checkout_servers(session, ref, server_kwargs)
        return
    srv = _start_or_fail(ref, dict(server_kwargs))
    try:
        yield srv
    finally:
        srv.stop()


def _ab_servers(
    session: NetbenchSession, refs: tuple[str, str], server_kwargs: dict[str, Any]
) -> Iterator[Server]:
    yield from _ab_pair(
        session,
        (refs[0], lambda: _start_or_fail(refs[0], dict(server_kwargs))),
        (refs[1], lambda: _start_or_fail(refs[1], dict(server_kwargs))),
    )


def _ab_pair(
    session: NetbenchSession,
    base: tuple[str, Callable[[], Server]],
    head: tuple[str, Callable[[], Server]],
) -> Iterator[Server]:
    """Both arms' servers up (each a label and how to start it) for the test, the pair
    known to the session while it runs, both stopped after; the test gets BASE's."""
    base_server = base[1]()
    try:
        head_server = head[1]()
    except BaseException:
        base_server.stop()
        raise
    session.ab_pairs[id(base_server)] = AbPair(base[0], head[0], base_server, head_server)
    try:
        yield base_server
    finally:
        session.ab_pairs.pop(id(base_server), None)
        head_server.stop()
        base_server.stop()


def _ab_checkout_servers(
    session: NetbenchSession, ref: object, server_kwargs: dict[str, Any]
) -> Iterator[Server]:
    """The test's own server twice: HEAD as the test gives it, BASE the same spec started
    from the base checkout (every setting kept); each named for its arm."""
    settings = session.settings
    assert settings.ab_base_dir is not None and settings.ab_head_dir is not None
    try:
        base_ref, base_kwargs = in_base_checkout(
            ref, server_kwargs, settings.ab_head_dir, settings.ab_base_dir
        )
    except TypeError as exc:
        pytest.fail(
            f"netbench: cannot start server {describe(ref)!r} from the base checkout: {exc}",
            pytrace=False,
        )
    name = describe(ref)
    yield from _ab_pair(
        session,
        (
            f"{name} from {settings.ab_base_dir}",
            lambda: _start_or_fail(base_ref, {**base_kwargs, "name": f"{name} [base]"}),
        ),
        (name, lambda: _start_or_fail(ref, {**server_kwargs, "name": f"{name} [head]"})),
    )


def _start_or_fail(ref: object, server_kwargs: dict[str, Any]) -> Server:
    from pytest_netbench._errors import NetbenchError

    try:
        return start_server(ref, **server_kwargs)
    except (NetbenchError, TypeError) as exc:
        problem = f"netbench: cannot start server {describe(ref)!r}: {exc}"
    pytest.fail(problem, pytrace=False)
