"""What ran on a managed server's CPUs besides the server while a load ran.

A server's threads wait for a CPU (schedstat's second field) behind whatever holds it: its
own other workers and threads queueing for the cores it was given (its behaviour, which
its latency already shows), this test's own processes (the generator and its worker
processes), or other processes on the host. Only the last is host contention. The kernel
does not say whom a thread waited behind, so what each party ran on the server's CPUs is
measured over the sampler's span instead:

- everything: the CPUs' time not idle in /proc/stat (user, nice, system, irq, softirq
  and steal: a hypervisor that took the CPU is contention too), at the span's two ends;
- the server: its tree's CPU time (:class:`~pytest_netbench._servers.sampling.ProcessTreeSampler`);
- this test's own processes, "the harness": this process and its descendants, the
  server's tree apart (the generator runs here or in worker processes spawned from here;
  a backend or a helper the test started is the set-up's own too). At every sample each
  thread's nanoseconds on a CPU (schedstat) since the last one are charged to the
  server's CPUs by where the thread may run: all of it when its CPU set lies inside the
  server's, none when the two are apart, and otherwise by the CPU it ran on last (the
  ``processor`` field of its stat), an estimate. What ran between a thread's last sample
  and its end (a worker process exiting) is found from the processes' own and reaped
  children's times at the span's ends, and charged as the rest was.

The others' CPU is busy - server - harness, and :func:`contended_wait` shares each server
thread's wait out among what ran on its CPUs.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import math
import os
import time
from collections.abc import Sequence
from typing import Any

import psutil

from pytest_netbench._servers.process_tree import subtree_pids

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
# The harness's descendants are re-listed every this many samples.
_REFRESH_EVERY = 5


def cpus_of(pid: int) -> tuple[int, ...]:
    """The CPUs ``pid`` may run on; every CPU where the OS does not say."""
    allowed: list[int] | None = None
    with contextlib.suppress(psutil.Error, AttributeError, OSError):
        allowed = psutil.Process(pid).cpu_affinity()
    return tuple(sorted(allowed)) if allowed else tuple(range(psutil.cpu_count() or 1))


def cpus_idle_s(cpus: tuple[int, ...]) -> tuple[float, float]:
    """(now on the monotonic clock, seconds the CPUs ``cpus`` have spent since boot on
    anything but processes: idle, waiting for I/O, and serving interrupts where the kernel
    charges that to no process), nan where /proc/stat is not readable.

    The processes' time is the span less this, not the sum of /proc/stat's user and system
    fields: those are counted by the timer tick, which a CPU that wakes from idle, serves a
    request and sleeps again between two ticks never meets (a pinned server's own time read
    12 % above its core's that way), while a tickless kernel clocks idle time exactly.
    Steal stays in: a hypervisor that took the CPU is contention."""
    now = time.monotonic()
    try:
        with open("/proc/stat", "rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return now, math.nan
    wanted = set(cpus)
    ticks = found = 0
    for line in lines:
        name, _, rest = line.partition(b" ")
        if not name.startswith(b"cpu") or not name[3:].isdigit() or int(name[3:]) not in wanted:
            continue
        # user nice system idle iowait irq softirq steal ...
        fields = [int(v) for v in rest.split()[:7]] + [0] * 7
        ticks += sum(fields[3:7] if irq_time_apart() else fields[3:5])
        found += 1
    return now, ticks * _TICK_S if found == len(wanted) else math.nan


@functools.cache
def irq_time_apart() -> bool:
    """Whether the kernel charges interrupt work to no task (CONFIG_IRQ_TIME_ACCOUNTING, as
    most distributions build it): then the server's own CPU time leaves out the packets it
    sent and received, and so must its CPUs' busy time, or on a loopback benchmark 15-20 %
    of a server's core would read as other processes'. Where the kernel's build options
    cannot be read it is taken to be so, which errs towards calling fewer results
    contended. Without it (this repository's test machine) that work is inside whichever
    task it interrupted, the server's among them."""
    release = os.uname().release if hasattr(os, "uname") else ""
    for path in ("/proc/config.gz", f"/boot/config-{release}"):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rb") as f:
                text = f.read()
        except OSError:
            continue
        return b"\nCONFIG_IRQ_TIME_ACCOUNTING=y" in text
    return True


class HostCpuSampler:
    """The busy time of a server's CPUs and the harness's part of it, from :meth:`start`
    to :meth:`stop`; :meth:`sample` in between (the server sampler's rate)."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.cpus: tuple[int, ...] = ()
        self._cpu_set: frozenset[int] = frozenset()
        self._me = os.getpid()
        self._pids: list[int] = []
        self._samples = 0
        self._idle_start = (0.0, math.nan)
        self._times_start = 0.0
        self._last_ns: dict[tuple[int, int], int] = {}
        self._tracked_ns = 0  # harness threads' CPU, wherever it ran
        self._charged_ns = 0.0  # ... the part on the server's CPUs

    def start(self) -> None:
        self.cpus = cpus_of(self.server_pid)
        self._cpu_set = frozenset(self.cpus)
        self._idle_start = cpus_idle_s(self.cpus)
        self._pids = self._harness()
        self._times_start = _process_times(self._pids)
        self._read_threads(baseline=True)

    def sample(self) -> None:
        self._samples += 1
        if self._samples % _REFRESH_EVERY == 0:
            self._pids = self._harness()
        self._read_threads(baseline=False)

    def figures(
        self, server_cpu_s: float, threads: Sequence[tuple[float, float]]
    ) -> dict[str, Any]:
        """Take the last readings: the ``ServerStats`` fields of the host's CPU use, given
        the server's CPU seconds and each of its threads' (seconds running, waiting)."""
        (begun, idle_before), (now, idle) = self._idle_start, cpus_idle_s(self.cpus)
        busy = (now - begun) * len(self.cpus) - (idle - idle_before)
        busy = busy if math.isnan(busy) else max(0.0, busy)
        self._pids = self._harness()
        self._read_threads(baseline=False)
        tracked_s = self._tracked_ns / 1e9
        charged_s = self._charged_ns / 1e9
        # Ended between two samples: the processes' times (ticks) hold it, the threads'
        # clocks do not. Charged as the rest of the harness's CPU was.
        rest = max(0.0, _process_times(self._pids) - self._times_start - tracked_s)
        share = charged_s / tracked_s if tracked_s > 0 else 0.0
        harness = charged_s + rest * share
        others = others_cpu(busy, server_cpu_s, harness)
        return {
            "cpus": self.cpus,
            "cpus_busy_s": busy,
            "harness_cpu_s": harness,
            "host_other_cpu_s": others,
            "contended_wait_s": contended_wait(threads, others, busy),
        }

    # -- readings -----------------------------------------------------------------------
    def _harness(self) -> list[int]:
        """This process and its descendants, the server's whole subtree left out."""
        return subtree_pids(self._me, leave_out=self.server_pid)

    def _read_threads(self, *, baseline: bool) -> None:
        """Charge each harness thread's nanoseconds on a CPU since its last reading (all of
        them for a thread born since the start)."""
        for pid in self._pids:
            task = f"/proc/{pid}/task"
            try:
                tids = os.listdir(task)
            except OSError:
                continue
            for name in tids:
                ns = _runtime_ns(f"{task}/{name}/schedstat")
                if ns is None:
                    continue
                key = (pid, int(name))
                spent = ns - self._last_ns.get(key, 0)
                self._last_ns[key] = ns
                if baseline or spent <= 0:
                    continue
                self._tracked_ns += spent
                self._charged_ns += spent * self._on_server_cpus(pid, int(name))

    def _on_server_cpus(self, pid: int, tid: int) -> float:
        """The share of a thread's recent CPU that ran on the server's CPUs: 1 or 0 when its
        CPU set says, else by the CPU it last ran on (an estimate over one sample's time)."""
        try:
            allowed = os.sched_getaffinity(tid)
        except OSError:
            return 0.0  # ended since its clock was read
        if allowed <= self._cpu_set:
            return 1.0
        inside = allowed & self._cpu_set
        if not inside:
            return 0.0
        last = _last_cpu(f"/proc/{pid}/task/{tid}/stat")
        if last is None:  # its share of CPUs, for want of better
            return len(inside) / len(allowed)
        return 1.0 if last in self._cpu_set else 0.0


def _process_times(pids: list[int]) -> float:
    """The processes' CPU seconds, with the children each reaped (ticks)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def _runtime_ns(path: str) -> int | None:
    try:
        with open(path, "rb") as f:
            return int(f.read().split(maxsplit=1)[0])
    except (OSError, ValueError, IndexError):
        return None


def _last_cpu(path: str) -> int | None:
    """The ``processor`` field of a thread's stat (the 39th; the name before it may hold
    spaces, so fields are counted after its closing parenthesis)."""
    try:
        with open(path, "rb") as f:
            after_name = f.read().rpartition(b")")[2].split()
        return int(after_name[36])
    except (OSError, ValueError, IndexError):
        return None


def others_cpu(busy_s: float, server_cpu_s: float, harness_cpu_s: float) -> float:
    """Other processes' CPU seconds on the server's CPUs: what ran there, less the server's
    own and this test's; never below 0 (the parts come from different clocks)."""
    if math.isnan(busy_s) or math.isnan(harness_cpu_s):
        return math.nan
    return max(0.0, busy_s - server_cpu_s - harness_cpu_s)


def contended_wait(threads: Sequence[tuple[float, float]], others_s: float, busy_s: float) -> float:
    """Of the server's threads' wait for a CPU, the part spent behind other processes.

    ``threads``: each thread's (seconds on a CPU, seconds waiting for one). The kernel does
    not say whom a thread waited behind, so each thread's wait is shared out in proportion
    to what else ran on the server's CPUs meanwhile: the others', this test's processes'
    and the server's other threads' CPU, never the thread's own (a thread cannot wait
    behind itself: a one-thread server that waits beside a busy loop waited behind it
    alone, while a server's eight threads queueing for one core mostly wait behind each
    other)."""
    if math.isnan(others_s) or math.isnan(busy_s):
        return math.nan
    if others_s <= 0:
        return 0.0
    return sum(wait * others_s / max(busy_s - run, others_s) for run, wait in threads)
