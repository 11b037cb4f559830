"""What wrk, ab and h2load print, read into one :class:`ToolFigures`: no subprocess here,
text only.

wrk (``--latency``) prints ``Requests/sec``, ``N requests in Ts``, a latency distribution
(50/75/90/99 %) with units (``151.00us``, ``2.37ms``), ``Socket errors: connect a, read b,
write c, timeout d`` and ``Non-2xx or 3xx responses: n`` when there were any.

ab prints ``Complete requests``, ``Failed requests`` (with a breakdown by kind),
``Non-2xx responses`` when there were any, ``Requests per second``, ``Time taken for
tests`` and a table of percentiles in whole milliseconds. Its ``-e`` CSV file has one row
per percent with the time to 3 decimals, so percentiles are read from it when given and
from the table otherwise.

h2load prints ``finished in 2.00s, 25430.00 req/s``, ``requests: N total, N started, N
done, N succeeded, N failed, N errored, N timeout``, ``status codes: N 2xx, N 3xx, N 4xx, N
5xx`` and a ``time for request:`` row of min, max, mean and sd (``53us``, ``1.53ms``): no
percentiles, so its latency figures are those four.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_netbench._errors import ToolFailed
from pytest_netbench._public import publish

_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_TIME = r"(\d+(?:\.\d+)?)(us|ms|s|m|h)"
_WRK_PERCENTILE = re.compile(rf"^\s+(\d+(?:\.\d+)?)%\s+{_TIME}\s*$", re.MULTILINE)
_WRK_RPS = re.compile(r"^Requests/sec:\s+(\d+(?:\.\d+)?)", re.MULTILINE)
_WRK_DONE = re.compile(rf"^\s*(\d+) requests in {_TIME}", re.MULTILINE)
_WRK_SOCKET = re.compile(
    r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", re.MULTILINE
)
_WRK_STATUS = re.compile(r"Non-2xx or 3xx responses: (\d+)")
_AB_FIELD = r"^{}:\s+(\d+(?:\.\d+)?)"
_AB_FAILED_KINDS = re.compile(
    r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)"
)
_AB_TABLE = re.compile(r"^\s*(\d+)%\s+(\d+)", re.MULTILINE)
_AB_CSV_ROW = re.compile(r"^(\d+),(\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_H2LOAD_FINISHED = re.compile(rf"^finished in {_TIME}, (\d+(?:\.\d+)?) req/s", re.MULTILINE)
_H2LOAD_REQUESTS = re.compile(
    r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed,"
    r" (\d+) errored, (\d+) timeout",
    re.MULTILINE,
)
_H2LOAD_STATUS = re.compile(
    r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", re.MULTILINE
)
_H2LOAD_REQUEST_TIME = re.compile(
    rf"^time for request:\s+{_TIME}\s+{_TIME}\s+{_TIME}\s+{_TIME}", re.MULTILINE
)


# The latency summary of a tool without percentiles (h2load), as ToolFigures fields.
_SUMMARY = ("min_ms", "max_ms", "mean_ms", "stdev_ms")


@dataclass(frozen=True, slots=True)
class ToolFigures:
    """One run of a second tool (wrk or ab), as that tool reported it."""

    tool: str
    command: tuple[str, ...]
    requests: int  # completed, as the tool counts them
    duration_s: float
    rps: float
    errors: Mapping[str, int]  # the tool's own kinds: connect, read, timeout, status, ...
    percentiles: Mapping[float, float] = field(default_factory=dict)  # percent -> ms
    version: str = ""
    output: str = ""  # the tool's own text, kept for the record
    # A tool that prints no percentiles (h2load): its latency summary, ms; NaN when none.
    min_ms: float = math.nan
    max_ms: float = math.nan
    mean_ms: float = math.nan
    stdev_ms: float = math.nan

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    def percentile(self, q: float) -> float:
        """The latency at ``q`` percent in ms, as the tool printed it; NaN if it did not."""
        return self.percentiles.get(float(q), math.nan)

    @property
    def p50_ms(self) -> float:
        return self.percentile(50)

    @property
    def p90_ms(self) -> float:
        return self.percentile(90)

    @property
    def p99_ms(self) -> float:
        return self.percentile(99)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "version": self.version,
            "command": list(self.command),
            "requests": self.requests,
            "duration_s": self.duration_s,
            "rps": self.rps,
            "errors": dict(self.errors),
            "errors_total": self.errors_total,
            "percentiles": {f"{q:g}": ms for q, ms in sorted(self.percentiles.items())},
            "output": self.output,
            **{
                name: getattr(self, name)
                for name in _SUMMARY
                if not math.isnan(getattr(self, name))
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolFigures:
        return cls(
            tool=str(data["tool"]),
            command=tuple(str(a) for a in data.get("command", ())),
            requests=int(data["requests"]),
            duration_s=float(data["duration_s"]),
            rps=float(data["rps"]),
            errors={str(k): int(v) for k, v in data.get("errors", {}).items()},
            percentiles={float(q): float(ms) for q, ms in data.get("percentiles", {}).items()},
            version=str(data.get("version", "")),
            output=str(data.get("output", "")),
            **{name: float(data[name]) for name in _SUMMARY if data.get(name) is not None},
        )


def parse_wrk(text: str, *, command: tuple[str, ...] = (), version: str = "") -> ToolFigures:
    """wrk's report (run with ``--latency``)."""
    rps = _required(_WRK_RPS, text, "wrk", "Requests/sec")
    done = _WRK_DONE.search(text)
    if done is None:
        raise ToolFailed(f"wrk printed no 'N requests in T' line:\n{text[-800:]}")
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0}
    socket = _WRK_SOCKET.search(text)
    if socket is not None:
        for kind, count in zip(
            ("connect", "read", "write", "timeout"), socket.groups(), strict=True
        ):
            errors[kind] = int(count)
    status = _WRK_STATUS.search(text)
    if status is not None:
        errors["status"] = int(status.group(1))
    percentiles = {
        float(q): float(value) * _UNITS_MS[unit] for q, value, unit in _WRK_PERCENTILE.findall(text)
    }
    return ToolFigures(
        tool="wrk",
        command=command,
        requests=int(done.group(1)),
        duration_s=float(done.group(2)) * _UNITS_MS[done.group(3)] / 1000,
        rps=rps,
        errors=errors,
        percentiles=percentiles,
        version=version,
        output=text,
    )


def parse_ab(
    text: str, *, csv: str = "", command: tuple[str, ...] = (), version: str = ""
) -> ToolFigures:
    """ab's report; ``csv`` is the file its ``-e`` option wrote (finer percentiles)."""
    complete = _required(_ab_field("Complete requests"), text, "ab", "Complete requests")
    rps = _required(_ab_field("Requests per second"), text, "ab", "Requests per second")
    taken = _required(_ab_field("Time taken for tests"), text, "ab", "Time taken for tests")
    errors = {"connect": 0, "receive": 0, "length": 0, "exceptions": 0, "status": 0}
    kinds = _AB_FAILED_KINDS.search(text)
    if kinds is not None:
        for kind, count in zip(
            ("connect", "receive", "length", "exceptions"), kinds.groups(), strict=True
        ):
            errors[kind] = int(count)
    non_2xx = _ab_field("Non-2xx responses").search(text)
    if non_2xx is not None:
        errors["status"] = int(float(non_2xx.group(1)))
    rows = _AB_CSV_ROW.findall(csv) or _AB_TABLE.findall(_after(text, "Percentage of"))
    return ToolFigures(
        tool="ab",
        command=command,
        requests=int(complete),
        duration_s=taken,
        rps=rps,
        errors=errors,
        percentiles={float(q): float(ms) for q, ms in rows},
        version=version,
        output=text,
    )


def parse_h2load(text: str, *, command: tuple[str, ...] = (), version: str = "") -> ToolFigures:
    """h2load's report. Its errors: ``status`` (4xx and 5xx answers) and ``errored`` (streams
    or connections that failed, timeouts included); ``requests`` is its ``done`` count."""
    finished = _H2LOAD_FINISHED.search(text)
    counts = _H2LOAD_REQUESTS.search(text)
    if finished is None or counts is None:
        raise ToolFailed(
            f"h2load printed no 'finished in' or 'requests:' line; its output:\n{text[-800:]}"
        )
    _total, _started, done, _succeeded, _failed, errored, _timeout = map(int, counts.groups())
    status = _H2LOAD_STATUS.search(text)
    errors = {"status": 0, "errored": errored}
    if status is not None:
        errors["status"] = int(status.group(3)) + int(status.group(4))
    figures = [math.nan] * len(_SUMMARY)  # min, max, mean, sd
    timing = _H2LOAD_REQUEST_TIME.search(text)
    if timing is not None and done:
        values = timing.groups()
        figures = [float(values[2 * i]) * _UNITS_MS[values[2 * i + 1]] for i in range(4)]
    return ToolFigures(
        tool="h2load",
        command=command,
        requests=done,
        duration_s=float(finished.group(1)) * _UNITS_MS[finished.group(2)] / 1000,
        rps=float(finished.group(3)),
        errors=errors,
        version=version,
        output=text,
        min_ms=figures[0],
        max_ms=figures[1],
        mean_ms=figures[2],
        stdev_ms=figures[3],
    )


def _ab_field(name: str) -> re.Pattern[str]:
    return re.compile(_AB_FIELD.format(re.escape(name)), re.MULTILINE)


def _required(pattern: re.Pattern[str], text: str, tool: str, what: str) -> float:
    match = pattern.search(text)
    if match is None:
        raise ToolFailed(f"{tool} printed no {what!r} figure; its output:\n{text[-800:]}")
    return float(match.group(1))


def _after(text: str, marker: str) -> str:
    index = text.find(marker)
    return text[index:] if index >= 0 else ""


publish(globals())
