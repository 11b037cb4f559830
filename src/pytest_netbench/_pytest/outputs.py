"""Files a session writes: the results JSON and pytest-benchmark's JSON format.

Both carry the same environment (CPU, cores, Python, packages, git commit), collected
once per session; the formats themselves belong to the report layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_netbench._report.environment import Environment
    from pytest_netbench._report.matrix import Record


@cache
def session_environment() -> Environment:
    from pytest_netbench._report.environment import collect_environment

    return collect_environment()


def write_json(path: str, records: Sequence[Record]) -> Path:
    from pytest_netbench._report.jsonfile import write_session_json

    return write_session_json(path, records, session_environment())


def write_benchmark_json(path: str, records: Sequence[Record]) -> Path:
    from pytest_netbench._report.benchmark_compat import write_benchmark_json as write

    return write(path, records, session_environment())
