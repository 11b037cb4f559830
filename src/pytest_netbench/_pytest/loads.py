"""What the ``netbench`` fixture gives a test, and what a failing test's report shows.

:class:`NetbenchFixture` holds no measurement logic: it scales the options, builds the
spec through the library (so bad arguments fail before any traffic), takes the measured
window, runs the trials (interleaved across the two servers in A/B mode), and records
each result against the test. When the test fails, its report gets each load's summary
and the tail of each server's log: a bare ``assert r.p99_ms < 50`` says nothing about
why, the percentile table, error kinds and the server's last words usually do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_netbench._pytest.session import (
    ARM_PARAM,
    AbPair,
    NetbenchSession,
    function_id,
    param_strings,
    to_property,
)

if TYPE_CHECKING:
    from pytest_netbench._model import LoadResult, LoadSpec
    from pytest_netbench._servers.launcher import Server

# Results and servers of the running test, for the failure report.
RESULTS_KEY = pytest.StashKey[list[tuple[str, "LoadResult"]]]()
SERVERS_KEY = pytest.StashKey[list["Server"]]()


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
            from pytest_netbench._api import DEFAULT_DURATION_S

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
        except (NetbenchError, TypeError, ValueError) as exc:
            problem = f"netbench: {exc}"
        # Failing outside the except block keeps the library's traceback out of the report.
        pytest.fail(problem, pytrace=False)

    def _run(
        self, spec: LoadSpec, server: Server | None, label: str, allow_invalid: bool
    ) -> LoadResult:
        server = server if server is not None else self._server_for(spec)
        pair = self._session.ab_pairs.get(id(server)) if server is not None else None
        if pair is not None:
            trials, tested = self._run_ab(spec, pair, label)
        else:
            trials = [self._measure(spec, server, label, t, None) for t in self._trials()]
            tested = trials
        if not allow_invalid:
            # Every trial lands in the matrix and the comparison, not only the median one.
            for result in trials:
                self._fail_if_invalid(result)
        return median_trial(tested)

    def _run_ab(
        self, spec: LoadSpec, pair: AbPair, label: str
    ) -> tuple[list[LoadResult], list[LoadResult]]:
        """Trials on both arms, interleaved; returns (all of them, HEAD's)."""
        arms = (("base", pair.base), ("head", pair.head))
        everything: list[LoadResult] = []
        head: list[LoadResult] = []
        for trial in self._trials():
            # ABBA order: drift over the session (heat, other load) hits both arms alike.
            order = arms if trial % 2 == 0 else arms[::-1]
            for arm, srv in order:
                arm_spec = dataclasses.replace(spec, host=srv.host, port=int(srv.port or 0))
                result = self._measure(arm_spec, srv, label, trial, arm)
                everything.append(result)
                if arm == "head":
                    head.append(result)
        return everything, head

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
                result = run_spec(spec, server)
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
    """Servers this test started or received through fixtures (both arms in A/B mode)."""
    from pytest_netbench._pytest.session import get_session
    from pytest_netbench._servers.launcher import Server

    started: list[Server] = item.stash.get(SERVERS_KEY, [])
    found = list(started)
    funcargs: dict[str, object] = getattr(item, "funcargs", {})
    found += [v for v in funcargs.values() if isinstance(v, Server) and v not in found]
    pairs = get_session(item.config).ab_pairs
    found += [pairs[id(srv)].head for srv in found if id(srv) in pairs]
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


# -- the failure report ------------------------------------------------------------------------
_LOG_TAIL_LINES = 20


def add_report_sections(item: pytest.Item, report: pytest.TestReport) -> None:
    """A failed test: full summaries and server logs. A passed one: a line per load (shown
    with ``-rP``), so every netbench report says what was measured."""
    if report.failed:
        _add_failure_sections(item, report)
    elif report.when == "call" and item.stash.get(RESULTS_KEY, []):
        lines = [_one_line(title, r) for title, r in item.stash.get(RESULTS_KEY, [])]
        report.sections.append(("netbench results", "\n".join(lines)))


def _one_line(title: str, result: LoadResult) -> str:
    flag = "" if result.valid else "  INVALID"
    return (
        f"{title}: {result.rps:,.0f} req/s, p50 {result.p50_ms:.3f} ms, p99 {result.p99_ms:.3f}"
        f" ms, {result.ok} ok, {result.errors_total} errors{flag}"
    )


def _add_failure_sections(item: pytest.Item, report: pytest.TestReport) -> None:
    from pytest_netbench._report.summary import format_result

    for title, result in item.stash.get(RESULTS_KEY, []):
        report.sections.append((f"netbench result: {title}", format_result(result)))
    for srv in servers_of(item):
        try:
            tail = srv.log_tail(lines=_LOG_TAIL_LINES)
        except OSError as exc:
            tail = f"(log unreadable: {exc})"
        name = getattr(srv, "name", None) or srv.url
        report.sections.append(
            (f"netbench server log: {name} (last {_LOG_TAIL_LINES} lines)", tail or "(empty)")
        )
