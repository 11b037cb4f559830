"""Run wrk pinned to one core and read its figures and its own CPU time."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from launch import need_tool
from measured import run_measured

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}
_TOTAL = re.compile(r"(\d+) requests in ([\d.]+)(us|ms|s|m),")
_PERCENTILE = re.compile(r"^\s+(\d+(?:\.\d+)?)%\s+([\d.]+)(us|ms|s|m)\s*$", re.M)
_SOCKET_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
_NON_2XX = re.compile(r"Non-2xx or 3xx responses: (\d+)")


@dataclass(frozen=True)
class WrkRun:
    requests: int
    duration_s: float
    cpu_s: float
    percentiles_ms: dict[float, float]
    errors: int
    max_rss_kib: int

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s

    @property
    def cpu_us_per_request(self) -> float:
        return self.cpu_s / self.requests * 1e6


def run_wrk(
    url: str,
    *,
    cpu: int,
    connections: int,
    duration_s: float,
    latency: bool = False,
    close_each: bool = False,
) -> WrkRun:
    """One thread, ``connections`` keep-alive connections, for ``duration_s`` seconds; with
    ``close_each`` every request asks ``Connection: close`` and wrk reconnects for the next."""
    wrk = need_tool("wrk", "apt-get install wrk")
    taskset = need_tool("taskset", "apt-get install util-linux")
    argv = [taskset, "-c", str(cpu), wrk, "-t1", f"-c{connections}", f"-d{duration_s:g}s"]
    if latency:
        argv.append("--latency")
    if close_each:
        argv += ["-H", "Connection: close"]
    done = run_measured([*argv, url], timeout_s=duration_s + 60)
    total = _TOTAL.search(done.stdout)
    if done.returncode != 0 or total is None:
        sys.exit(f"wrk failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    socket_errors = _SOCKET_ERRORS.search(done.stdout)
    errors = sum(int(n) for n in socket_errors.groups()) if socket_errors else 0
    non_2xx = _NON_2XX.search(done.stdout)
    errors += int(non_2xx.group(1)) if non_2xx else 0
    return WrkRun(
        requests=int(total.group(1)),
        duration_s=float(total.group(2)) * _UNITS[total.group(3)] / 1e3,
        cpu_s=done.cpu_s,
        percentiles_ms={
            float(q): float(v) * _UNITS[unit] for q, v, unit in _PERCENTILE.findall(done.stdout)
        },
        errors=errors,
        max_rss_kib=done.max_rss_kib,
    )
