"""The plugin's per-session state, kept in ``config.stash``.

Workers and the controller each hold one. Workers measure and attach records to their
reports; whoever receives the reports (the controller, or the single process) collects
them here and renders, stores and gates at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from pytest_netbench._pytest.options import Settings
from pytest_netbench._pytest.records import from_properties
from pytest_netbench._pytest.window import LOCK_INPUT_KEY, MeasuredWindow

if TYPE_CHECKING:
    from pytest_netbench._report.matrix import Record
    from pytest_netbench._servers.launcher import Server

SKIP_REASON = "pass --netbench to run performance tests"


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
    # Set by the end-of-session step, printed by the terminal summary.
    summary_text: str = ""
    gate_failed: bool = False
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
        self.records.extend(from_properties(properties))


SESSION_KEY = pytest.StashKey[NetbenchSession]()


def get_session(config: pytest.Config) -> NetbenchSession:
    return config.stash[SESSION_KEY]
