"""What one running test holds for netbench: the servers it started or received, and the
loads and experiments it ran, kept in the item's stash for its report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_netbench._compare.records import ExperimentRecord
    from pytest_netbench._model import LoadResult
    from pytest_netbench._servers.launcher import Server


@dataclass(frozen=True, slots=True)
class ShownLoad:
    """A load as the test's report names it, with the runs discarded before it."""

    title: str
    result: LoadResult
    discarded: tuple[LoadResult, ...] = ()


# The loads, experiments and servers of the running test, for its report.
LOADS_KEY = pytest.StashKey[list[ShownLoad]]()
EXPERIMENTS_KEY = pytest.StashKey[list[tuple[str, "ExperimentRecord"]]]()
SERVERS_KEY = pytest.StashKey[list["Server"]]()
# Each look of a sequential gate, in words: what it decided, and what each gated metric's
# noise lets the budget show.
LOOKS_KEY = pytest.StashKey[list[str]]()


def servers_of(item: pytest.Item) -> list[Server]:
    """Servers this test started or received through fixtures (both arms in A/B mode)."""
    from pytest_netbench._plugin.session import get_session
    from pytest_netbench._servers.launcher import Server

    started: list[Server] = item.stash.get(SERVERS_KEY, [])
    found = list(started)
    funcargs: dict[str, object] = getattr(item, "funcargs", {})
    found += [v for v in funcargs.values() if isinstance(v, Server) and v not in found]
    pairs = get_session(item.config).ab_pairs
    found += [pairs[id(srv)].head for srv in found if id(srv) in pairs]
    return found
