"""Recording a load against a test, and its trip through the test report.

The record itself is the report layer's :class:`~pytest_netbench._report.matrix.Record`
(the JSON file, stored runs and matrices all read it). It travels inside
``report.user_properties`` as a JSON string: pytest already serialises those from xdist
workers to the controller and writes them into JUnit XML, so one path serves single
runs, ``-n N`` runs and CI tooling alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_netbench._report.matrix import Record

PROPERTY_NAME = "netbench"
ARM_PARAM = "arm"  # A/B mode: "base" or "head"
_PARAM_SUFFIX = re.compile(r"\[.*\]$")


def function_id(nodeid: str) -> str:
    """``tests/x.py::test_a[tornado-50]`` -> ``tests/x.py::test_a``."""
    return _PARAM_SUFFIX.sub("", nodeid)


def param_strings(params: Mapping[str, object]) -> dict[str, str]:
    """Parameter values as short strings, the way they read in a matrix header."""
    return {name: _short(value) for name, value in params.items()}


def _short(value: object) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return str(value)
    from pytest_netbench._pytest.servers import describe

    return describe(value)  # server references: their name, not their repr


def to_property(record: Record) -> tuple[str, str]:
    from pytest_netbench._report.jsonfile import record_to_dict, without_nan

    data = without_nan(record_to_dict(record))
    return PROPERTY_NAME, json.dumps(data, separators=(",", ":"), allow_nan=False)


def from_properties(properties: Iterable[tuple[str, object]]) -> list[Record]:
    """Every record carried in a report's ``user_properties``."""
    from pytest_netbench._report.jsonfile import record_from_dict

    return [
        record_from_dict(json.loads(value))
        for name, value in properties
        if name == PROPERTY_NAME and isinstance(value, str)
    ]
