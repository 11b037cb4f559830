"""How the plugin runs the loads of a test and records them.

The experiment layer decides what to run (trials, reruns of generator-spoiled runs, rate
steps); it calls a *runner* for each load. The plugin's runner takes the measured window
(so loads under ``pytest -n N`` never overlap), samples the managed server, and remembers
when each run happened, so a record can say when the result it keeps was measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from pytest_netbench._plugin.session import (
    ARM_PARAM,
    MeasuredWindow,
    WindowTimes,
    function_id,
    get_session,
    param_strings,
    to_property,
)

if TYPE_CHECKING:
    from pytest_netbench._compare.records import ExperimentKind, ExperimentRecord, Record
    from pytest_netbench._load.attempts import Attempts
    from pytest_netbench._model import LoadResult, LoadSpec
    from pytest_netbench._servers.launcher import Server


class PluginRunner:
    """Runs one load for an experiment. With ``hold_window`` each load takes the measured
    window itself; without, the caller holds it around the whole experiment."""

    def __init__(
        self,
        window: MeasuredWindow,
        server: Server | None,
        *,
        hold_window: bool = True,
        cluster: object | None = None,
        run_load: Callable[[LoadSpec, Server | None], LoadResult] | None = None,
    ) -> None:
        self._window = window
        self._server = server
        self._hold = hold_window
        self._cluster = cluster  # a Dask scheduler address or Client: the shares run there
        # A load that is not run_spec's (a user flow): called with the spec and the server.
        self._run_load = run_load
        self._windows: dict[int, WindowTimes] = {}
        self._seen: list[LoadResult] = []  # keeps each result alive, so its id stays its own

    def __call__(self, spec: LoadSpec) -> LoadResult:
        if not self._hold:
            return self._load(spec)
        with self._window.hold() as times:
            result = self._load(spec)
        self._windows[id(result)] = times
        self._seen.append(result)
        return result

    def _load(self, spec: LoadSpec) -> LoadResult:
        from pytest_netbench._load.api import run_spec

        if self._run_load is not None:
            return self._run_load(spec, self._server)
        return run_spec(spec, self._server, cluster=self._cluster)

    def profiled(self, spec: LoadSpec, measured: LoadResult) -> LoadResult:
        """``measured`` with the server's profile, from one more load of ``spec`` that is
        never recorded (``with_profile``)."""
        from pytest_netbench._load.profiled import with_profile

        result = with_profile(spec, self._server, measured, self._load)
        self._windows[id(result)] = self.window_of(measured)
        self._seen.append(result)
        return result

    def window_of(self, result: LoadResult) -> WindowTimes:
        return self._windows.get(id(result), WindowTimes())


def params_of(item: pytest.Item, arm: str | None) -> dict[str, str]:
    """The test's parameters as strings; in A/B mode with ``arm``: in place of ``server``
    when two commands replaced it (``--netbench-ab``), beside it when each arm is the
    test's own server (``--netbench-ab-base-dir``)."""
    callspec = getattr(item, "callspec", None)
    params = param_strings(dict(callspec.params) if callspec is not None else {})
    if arm is not None:
        if get_session(item.config).settings.ab_refs is not None:
            params.pop("server", None)  # the test's own `server` was replaced by the pair
        params[ARM_PARAM] = arm
    return params


def columns_of(item: pytest.Item) -> tuple[str, ...]:
    """The matrix columns the test asks for: ``@pytest.mark.netbench(metrics=[...])``."""
    from pytest_netbench._compare.metrics import check_metrics
    from pytest_netbench._errors import SpecError

    marker = item.get_closest_marker("netbench")
    wanted = marker.kwargs.get("metrics") if marker is not None else None
    if not wanted:
        return ()
    if isinstance(wanted, str):
        wanted = wanted.split(",")
    try:
        return check_metrics(str(c) for c in wanted)
    except SpecError as exc:
        raise SpecError(f"@pytest.mark.netbench(metrics=...): {exc}") from None


def record_load(
    item: pytest.Item,
    attempts: Attempts,
    window: WindowTimes,
    *,
    trial: int,
    arm: str | None,
    label: str,
) -> Record:
    """Add the record of one trial (its kept result and discarded runs) to the test."""
    from pytest_netbench._compare.records import Record

    record = Record(
        nodeid=item.nodeid,
        function=function_id(item.nodeid),
        params=params_of(item, arm),
        trial=trial,
        started=window.started or None,
        ended=window.ended or None,
        result=attempts.kept,
        label=label,
        discarded=attempts.discarded,
        columns=columns_of(item),
    )
    item.user_properties.append(to_property(record))
    return record


def record_experiment(
    item: pytest.Item,
    kind: ExperimentKind,
    data: Mapping[str, Any],
    window: WindowTimes,
    *,
    arm: str | None,
    label: str,
) -> ExperimentRecord:
    """Add the record of one experiment (its whole ``to_dict()``) to the test."""
    from pytest_netbench._compare.records import ExperimentRecord, without_nan

    record = ExperimentRecord(
        nodeid=item.nodeid,
        function=function_id(item.nodeid),
        params=params_of(item, arm),
        kind=kind,
        data=without_nan(data),
        started=window.started or None,
        ended=window.ended or None,
        label=label,
    )
    item.user_properties.append(to_property(record))
    return record
