"""Stored runs and the regression gate: ``--netbench-save``, ``--netbench-compare`` and
the A/B comparison, each ending in a verdict table and, with thresholds, a pass/fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._pytest.outputs import session_environment

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_netbench._report.matrix import Record


def save_run(root: str, name: str, records: Sequence[Record]) -> Path:
    from pytest_netbench._compare.storage import Storage

    stored = Storage(root).save(records, name, session_environment())
    return stored.path
