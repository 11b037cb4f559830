"""What one netbench session shares across its tests and processes.

* the settings read from the command line;
* the measured window: the only part of a test that must have the machine to itself.
  Under ``pytest -n N`` every worker would otherwise drive load at the same time and each
  would measure the others' noise; a cross-process file lock around the load alone keeps
  windows apart while server start-up, builds and ordinary tests still run in parallel;
* the records. A record (:class:`~pytest_netbench._compare.records.Record` for a load,
  ``ExperimentRecord`` for a sweep or capacity search; the JSON file, stored runs, matrices
  and comparisons all read them) travels inside ``report.user_properties`` as a JSON
  string: pytest already serialises those from xdist workers to the controller and writes
  them into JUnit XML, so one path serves single runs, ``-n N`` runs and CI tooling alike.
  Whoever receives the reports (the controller, or the single process) collects them here.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from pytest_netbench._plugin.options import Settings

if TYPE_CHECKING:
    from pytest_netbench._compare.records import ExperimentRecord, Record
    from pytest_netbench._servers.launcher import Server

SKIP_REASON = "pass --netbench to run performance tests"
LOCK_INPUT_KEY = "netbench_window_lock"  # key in xdist's workerinput
PROPERTY_NAME = "netbench"  # key in user_properties
ARM_PARAM = "arm"  # A/B mode: a record's "base" or "head" parameter
# A load never lasts this long; waiting longer means a worker hung while holding the lock.
_LOCK_WAIT_S = 3600.0
_PARAM_SUFFIX = re.compile(r"\[.*\]$")


# -- the measured window -----------------------------------------------------------------------
@dataclass(slots=True)
class WindowTimes:
    started: float = 0.0  # wall clock (time.time()), comparable across processes
    ended: float = 0.0


class MeasuredWindow:
    """Serialises measured windows across processes when a lock path is given."""

    def __init__(self, lock_path: str | None) -> None:
        self.lock_path = lock_path

    @contextmanager
    def hold(self) -> Iterator[WindowTimes]:
        times = WindowTimes()
        if self.lock_path is None:
            times.started = time.time()
            try:
                yield times
            finally:
                times.ended = time.time()
            return
        from filelock import FileLock

        with FileLock(self.lock_path, timeout=_LOCK_WAIT_S):
            times.started = time.time()
            try:
                yield times
            finally:
                times.ended = time.time()


# -- session state -----------------------------------------------------------------------------
@dataclass(slots=True)
class AbPair:
    """The two servers an A/B test measures in interleaved trials."""

    base_ref: str
    head_ref: str
    base: Server
    head: Server


@dataclass
class NetbenchSession:
    settings: Settings
    window: MeasuredWindow
    is_worker: bool = False
    records: list[Record] = field(default_factory=list)
    experiments: list[ExperimentRecord] = field(default_factory=list)
    # Set by the end-of-session step, printed by the terminal summary; and, when the gate
    # (or the step itself) failed the session, the line printed after pytest's own last one.
    summary_text: str = ""
    gate_failed: bool = False
    # No regression, but a gated metric's limit is below what this runner can detect.
    gate_cannot_tell: bool = False
    final_line: str = ""
    # id(base server) -> its A/B pair, so `netbench.http(server.url)` knows to interleave.
    ab_pairs: dict[int, AbPair] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: pytest.Config, settings: Settings) -> NetbenchSession:
        workerinput = getattr(config, "workerinput", None)
        lock_path = workerinput.get(LOCK_INPUT_KEY) if workerinput is not None else None
        return cls(
            settings=settings,
            window=MeasuredWindow(lock_path),
            is_worker=workerinput is not None,
        )

    def collect(self, properties: Iterable[tuple[str, object]]) -> None:
        from pytest_netbench._compare.records import split_records

        loads, experiments = split_records(from_properties(properties))
        self.records.extend(loads)
        self.experiments.extend(experiments)


SESSION_KEY = pytest.StashKey[NetbenchSession]()


def get_session(config: pytest.Config) -> NetbenchSession:
    return config.stash[SESSION_KEY]


# -- records -----------------------------------------------------------------------------------
def function_id(nodeid: str) -> str:
    """``tests/x.py::test_a[tornado-50]`` -> ``tests/x.py::test_a``."""
    return _PARAM_SUFFIX.sub("", nodeid)


def param_strings(params: Mapping[str, object]) -> dict[str, str]:
    """Parameter values as short strings, the way they read in a matrix header."""
    return {name: _short(value) for name, value in params.items()}


def _short(value: object) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return str(value)
    from pytest_netbench._plugin.servers import describe

    return describe(value)  # server references: their name, not their repr


def to_property(record: Record | ExperimentRecord) -> tuple[str, str]:
    from pytest_netbench._compare.records import record_to_dict, without_nan

    data = without_nan(record_to_dict(record))
    return PROPERTY_NAME, json.dumps(data, separators=(",", ":"), allow_nan=False)


def from_properties(
    properties: Iterable[tuple[str, object]],
) -> list[Record | ExperimentRecord]:
    """Every record (load or experiment) carried in a report's ``user_properties``."""
    from pytest_netbench._compare.records import record_from_dict

    return [
        record_from_dict(json.loads(value))
        for name, value in properties
        if name == PROPERTY_NAME and isinstance(value, str)
    ]
