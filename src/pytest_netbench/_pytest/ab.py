"""A/B mode: two servers measured in interleaved trials in one session.

With ``--netbench-ab BASE HEAD`` every test's ``server`` becomes the pair; the fixture
alternates the arms trial by trial (ABBA) so drift on a noisy runner falls on both alike,
and at the end each test's HEAD trials are compared with its BASE trials -- no stored
baseline, no second machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest

from pytest_netbench._model import LoadResult
from pytest_netbench._pytest.records import ARM_PARAM
from pytest_netbench._report.matrix import Record

AB_PARAM = "server"


def deselect_server_duplicates(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep one test per parameter set once the ``server`` parameter no longer matters."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or AB_PARAM not in callspec.params:
            kept.append(item)
            continue
        others = tuple(sorted((k, repr(v)) for k, v in callspec.params.items() if k != AB_PARAM))
        key = (item.nodeid.split("[", 1)[0], others)
        if key in seen:
            dropped.append(item)
        else:
            seen.add(key)
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@dataclass
class ArmPair:
    """One test's (function, parameters, label) trials on each arm."""

    title: str
    base: list[LoadResult] = field(default_factory=list)
    head: list[LoadResult] = field(default_factory=list)


def pair_arms(records: Iterable[Record]) -> list[ArmPair]:
    pairs: dict[tuple[str, tuple[tuple[str, str], ...], str], ArmPair] = {}
    for record in records:
        arm = record.params.get(ARM_PARAM)
        if arm not in ("base", "head"):
            continue
        others = tuple(sorted((k, str(v)) for k, v in record.params.items() if k != ARM_PARAM))
        key = (record.function, others, record.label)
        if key not in pairs:
            pairs[key] = ArmPair(_title(record.function, others, record.label))
        getattr(pairs[key], str(arm)).append(record.result)
    return [p for p in pairs.values() if p.base and p.head]


def _title(function: str, params: tuple[tuple[str, str], ...], label: str) -> str:
    name = function.rsplit("::", 1)[-1]
    extra = [f"{k}={v}" for k, v in params] + ([label] if label else [])
    return f"{name}[{', '.join(extra)}]" if extra else name
