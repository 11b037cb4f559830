"""One recorded load of one test, and its trip through a test report.

A record travels inside ``report.user_properties`` as a JSON string: that is what pytest
already serialises from xdist workers to the controller and writes into JUnit XML, so one
path serves single-process runs, ``-n N`` runs and CI tooling alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netbench._model import LoadResult

PROPERTY_NAME = "netbench"
_PARAM_SUFFIX = re.compile(r"\[.*\]$")


@dataclass(frozen=True, slots=True)
class Record:
    """A load measured in a test: who ran it, with which parameters, when, and the result."""

    nodeid: str
    function: str  # node id without the parameter suffix: one matrix per function
    params: Mapping[str, str]
    trial: int
    started: float  # wall-clock bounds of the measured window (time.time())
    ended: float
    result: LoadResult
    arm: str | None = None  # "base"/"head" in A/B mode
    label: str = ""  # the user's name for the load when a test runs several

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "function": self.function,
            "params": dict(self.params),
            "trial": self.trial,
            "arm": self.arm,
            "label": self.label,
            "started": self.started,
            "ended": self.ended,
            "result": self.result.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Record:
        return cls(
            nodeid=str(data["nodeid"]),
            function=str(data["function"]),
            params={str(k): str(v) for k, v in data.get("params", {}).items()},
            trial=int(data.get("trial", 0)),
            started=float(data["started"]),
            ended=float(data["ended"]),
            result=LoadResult.from_dict(data["result"]),
            arm=data.get("arm"),
            label=str(data.get("label", "")),
        )


def function_id(nodeid: str) -> str:
    """``tests/x.py::test_a[tornado-50]`` -> ``tests/x.py::test_a``."""
    return _PARAM_SUFFIX.sub("", nodeid)


def param_strings(params: Mapping[str, object]) -> dict[str, str]:
    """Parameter values as short strings, the way they read in a matrix header."""
    return {name: _short(value) for name, value in params.items()}


def _short(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    name = getattr(value, "name", None)
    return str(name) if isinstance(name, str) and name else str(value)


def to_property(record: Record) -> tuple[str, str]:
    return PROPERTY_NAME, json.dumps(record.to_dict(), separators=(",", ":"))


def from_properties(properties: Iterable[tuple[str, object]]) -> list[Record]:
    """Every record carried in a report's ``user_properties``."""
    out: list[Record] = []
    for name, value in properties:
        if name == PROPERTY_NAME and isinstance(value, str):
            out.append(Record.from_dict(json.loads(value)))
    return out
