"""Stored runs and the regression gate: ``--netbench-save``, ``--netbench-compare`` and the
A/B comparison. The verdicts (thresholds, significance) belong to the compare layer; this
module only finds what to compare with what.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._pytest.ab import pair_arms
from pytest_netbench._pytest.outputs import session_environment

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_netbench._compare.gate import Comparison, Threshold
    from pytest_netbench._report.matrix import Record


def thresholds(spec: str | None) -> list[Threshold]:
    from pytest_netbench._compare.gate import parse_thresholds

    return parse_thresholds(spec) if spec else []


def save_run(root: str, name: str, records: Sequence[Record]) -> Path:
    from pytest_netbench._compare.storage import Storage

    return Storage(root).save(records, name, session_environment()).path


def compare_with_stored(
    root: str, ref: str | None, records: Sequence[Record], gate: str | None
) -> Comparison:
    """This run against a stored one (``ref``: name, number, path, or None for the latest)."""
    from pytest_netbench._compare.gate import compare_runs
    from pytest_netbench._compare.storage import Storage

    baseline = Storage(root).load(ref)
    label = baseline.path.name if baseline.path is not None else baseline.name
    return compare_runs(records, baseline.records, thresholds(gate), baseline_name=label)


def describe_ab(refs: tuple[str, str]) -> str:
    return f"A/B mode: BASE = {refs[0]}\n          HEAD = {refs[1]}\n"


def compare_ab(refs: tuple[str, str], records: Sequence[Record], gate: str | None) -> Comparison:
    """Each test's HEAD trials against its BASE trials from this same session."""
    from pytest_netbench._compare.gate import Comparison, compare_results

    limits = thresholds(gate)
    items = []
    for pair in pair_arms(records):
        items += compare_results(pair.title, pair.head, pair.base, limits)
    return Comparison(
        items=tuple(items),
        baseline_name="BASE (A/B: HEAD and BASE in interleaved trials, this session)",
        thresholds=tuple(limits),
    )
