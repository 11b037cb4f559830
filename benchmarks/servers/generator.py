"""Run one netbench load in a fresh process pinned to one core, and report its own cost.

As a script (``python generator.py CPU JSON``) it pins itself, imports the engine, and calls
``http_load(**JSON)`` (``echo_load`` when the url is ``tcp://HOST:PORT``, with a
``payload_size``); it prints one JSON line with the result and three CPU figures:

- ``call_cpu_s``: process CPU spent inside the ``http_load`` call (set-up, connects, the run,
  teardown; the figure compared with wrk's whole process),
- ``process_cpu_s`` (filled in by the parent from ``wait4``): the whole interpreter,
  start-up and imports included,
- the engine's own window figure stays in ``result.generator.cpu_s``.

With ``"align": [period_s, phase_s]`` the call starts at that phase of ``CLOCK_MONOTONIC``
(the stall server's periods are counted on the same clock).
With ``"sample_rss": true`` a thread samples the process's RSS and open fds every 50 ms, so
the idle-connection benchmark can see memory while the connections are held.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from measured import run_measured

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss_bytes() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _MemorySampler(threading.Thread):
    """Keeps the RSS seen when the most fds were open (that is when the pool was full)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stopped = threading.Event()
        self.peak_fds = 0
        self.rss_at_peak = 0
        self.peak_rss = 0

    def run(self) -> None:
        while not self.stopped.wait(0.05):
            fds, rss = _open_fds(), _rss_bytes()
            self.peak_rss = max(self.peak_rss, rss)
            if fds >= self.peak_fds:
                self.peak_fds, self.rss_at_peak = fds, rss


def _sleep_until_phase(period_s: float, phase_s: float) -> None:
    """Sleep until ``monotonic() % period_s == phase_s`` (same clock as the stall server)."""
    now = time.monotonic()
    wait = (phase_s - now % period_s) % period_s
    time.sleep(wait)


def _child(cpu: int, options: dict[str, Any]) -> None:
    os.sched_setaffinity(0, {cpu})
    sample_rss = options.pop("sample_rss", False)
    url = options.pop("url")
    nofile = options.pop("nofile", 0)
    align = options.pop("align", None)  # [period_s, phase_s]: start at that clock phase
    if options.pop("gc_off", False):
        gc.disable()  # to see what the cyclic collector costs the run
    if nofile:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), hard))
    from pytest_netbench import echo_load, http_load

    memory = _MemorySampler() if sample_rss else None
    baseline = {"rss": _rss_bytes(), "fds": _open_fds()}
    if memory is not None:
        memory.start()
    if align is not None:
        _sleep_until_phase(*align)
    before = _cpu_s()
    if url.startswith("tcp://"):  # an echo load at tcp://HOST:PORT of payload_size bytes
        host, _, port = url[len("tcp://") :].rpartition(":")
        size = options.pop("payload_size")
        options["payload"] = (b"abcdefghijklmnopqrstuvwxyz" * (size // 26 + 1))[:size]
        result = echo_load(host, int(port), **options)
    else:
        result = http_load(url, **options)
    call_cpu = _cpu_s() - before
    report: dict[str, Any] = {"result": result.to_dict(), "call_cpu_s": call_cpu}
    if memory is not None:
        memory.stopped.set()
        memory.join()
        report["memory"] = {
            "baseline_rss": baseline["rss"],
            "baseline_fds": baseline["fds"],
            "peak_fds": memory.peak_fds,
            "rss_at_peak_fds": memory.rss_at_peak,
            "peak_rss": memory.peak_rss,
        }
    print("NETBENCH_REPORT " + json.dumps(report), flush=True)


@dataclass
class GeneratorRun:
    result: Any  # pytest_netbench.LoadResult (imported lazily by the parent too)
    call_cpu_s: float
    process_cpu_s: float
    memory: dict[str, int] = field(default_factory=dict)


def run_pinned(cpu: int, url: str, **options: Any) -> GeneratorRun:
    """Run ``http_load(url, **options)`` in a child pinned to ``cpu`` and collect its report."""
    from pytest_netbench import LoadResult

    argv = [sys.executable, __file__, str(cpu), json.dumps({"url": url, **options})]
    done = run_measured(argv)
    marker = "NETBENCH_REPORT "
    lines = [line for line in done.stdout.splitlines() if line.startswith(marker)]
    if done.returncode != 0 or not lines:
        sys.exit(f"netbench generator failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    data = json.loads(lines[-1][len(marker) :])
    return GeneratorRun(
        result=LoadResult.from_dict(data["result"]),
        call_cpu_s=data["call_cpu_s"],
        process_cpu_s=done.cpu_s,
        memory=data.get("memory", {}),
    )


if __name__ == "__main__":
    _child(int(sys.argv[1]), json.loads(sys.argv[2]))
    sys.exit(0)
