"""What a server's whole process tree spends while a load runs.

A daemon thread samples the tree at a modest rate (10 Hz by default). Counters
(CPU time, context switches) are deltas between :meth:`ProcessTreeSampler.start` and
:meth:`~ProcessTreeSampler.stop`; gauges (RSS, threads, fds, sockets) are peaks of the sum
over the tree. Children that end during the load, even between two samples, are still
charged: their CPU shows up in the ``children_*`` times of the tree member that reaped
them (a child re-parented to init and reaped there is lost).

The kernel's user and system times come in ticks of 10 ms, which is 3 % of a 0.3 s trial
at one core: too coarse for a regression gate on CPU per request. On Linux each thread's
``schedstat`` also counts its time on a CPU in nanoseconds; when the threads it saw
account for the tick total (no child reaped, no thread lost between samples), the total
comes from that clock and the ticks only split it into user and system.
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
import sys
import threading
import time
from dataclasses import dataclass

import psutil

from pytest_netbench._host.kernel import tcp_socket_counts
from pytest_netbench._model import ServerStats
from pytest_netbench._public import publish
from pytest_netbench._servers.host_cpu import HostCpuSampler
from pytest_netbench._servers.process_tree import subtree_pids
from pytest_netbench._servers.sock_diag import TCP_ESTABLISHED, TCP_TIME_WAIT, port_sockets

_MIB = 1024 * 1024
# The sampler runs in the generator's process, so what it costs is taken from the load.
# Three of its readings grow with the server or the machine, and each is spaced to take
# at most its share of one core's time (issue 35). The final sample always walks the
# sockets and reads the threads; the baseline reads the threads (its peaks are not kept).
# - Listing the tree reads every thread's children file: 3-10 ms for a server of 300
#   threads. A tree rarely changes under load: listed again every few samples at most.
_TREE_REFRESH_EVERY = 5
_TREE_REFRESH_SHARE = 0.01
# - Counting the port's sockets walks every TCP socket of the machine in the kernel, about
#   0.1 ms per thousand: 12 ms with the 110,000 TIME_WAIT sockets a few loads leave
#   behind, over a tenth of a core at 10 Hz; more where the port itself holds thousands.
_SOCKET_WALK_SHARE = 0.01
# - Reading every thread's status and schedstat costs about 16 us a thread, nearly all in
#   the kernel: 1.5 ms a sample with 50 threads, 15 ms with 500 (a thread per
#   connection), a seventh of a core at 10 Hz. Up to about 60 threads are read every
#   sample. What a thread did after its last read and before it ended is not counted.
_THREAD_READ_SHARE = 0.01
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
# Each thread's time on a CPU in nanoseconds (CONFIG_SCHED_INFO), beside the ticks.
_HAS_SCHEDSTAT = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat")


@dataclass(slots=True)
class _Counters:
    user: float = 0.0
    system: float = 0.0
    children_user: float = 0.0
    children_system: float = 0.0


@dataclass(slots=True)
class _Peaks:
    processes: int = 0
    rss_bytes: int = 0
    threads: int = 0
    fds: int = 0
    established: int = 0
    time_wait: int = 0
    host_in_use: int = 0
    host_time_wait: int = 0


class ProcessTreeSampler:
    """Samples the tree rooted at ``pid``; ``port`` selects the sockets that are counted."""

    def __init__(self, pid: int, interval: float = 0.1, *, port: int | None = None) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval!r}")
        self.pid = pid
        self.port = port
        self.interval = interval
        self._root: psutil.Process | None = None
        self._procs: dict[tuple[int, float], psutil.Process] = {}
        self._base: dict[tuple[int, float], _Counters] = {}
        self._last: dict[tuple[int, float], _Counters] = {}
        # Context switches are per thread on Linux; keyed (pid, create_time, tid) so a thread
        # that ends during the load keeps what it had done.
        self._ctx_base: dict[tuple[int, float, int], tuple[int, int]] = {}
        self._ctx_last: dict[tuple[int, float, int], tuple[int, int]] = {}
        # Each thread's nanoseconds on a CPU (schedstat), keyed as the context switches.
        self._run_base: dict[tuple[int, float, int], int] = {}
        self._run_last: dict[tuple[int, float, int], int] = {}
        # ... and runnable but waiting for one (schedstat's second field).
        self._wait_base: dict[tuple[int, float, int], int] = {}
        self._wait_last: dict[tuple[int, float, int], int] = {}
        self._peaks = _Peaks()
        self._samples = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: ServerStats | None = None
        self._tree_cache: list[psutil.Process] = []
        self._seen_last: set[tuple[int, float]] = set()
        self._parents: dict[tuple[int, float], int] = {}
        # What else ran on the server's CPUs meanwhile, and over how long a span.
        self._host = HostCpuSampler(pid)
        self._span = [0.0, 0.0]
        self._next_socket_walk = 0.0
        self._next_thread_read = 0.0
        self._next_tree_refresh = 0.0

    def start(self) -> None:
        """Take the baseline sample and begin sampling in a background thread."""
        if self._thread is not None:
            raise RuntimeError("this sampler was already started; make a new one per load")
        with contextlib.suppress(psutil.Error):
            self._root = psutil.Process(self.pid)
        # The first sample is the baseline: counters before it are not charged to the load.
        self._sample(baseline=True)
        self._host.start()
        self._span[0] = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="netbench-sampler", daemon=True)
        self._thread.start()

    def stop(self, completed_requests: int = 0) -> ServerStats:
        """Stop sampling and return the figures; ``completed_requests`` sets cpu_ms_per_request."""
        if self._result is not None:
            return self._result
        if self._thread is None:
            raise RuntimeError("stop() called before start()")
        self._stop.set()
        self._thread.join()
        self._tree_cache = []  # the final sample sees the tree as it is now
        self._sample(baseline=False, final=True)
        self._span[1] = time.monotonic()
        self._result = self._summarise(completed_requests)
        return self._result

    def __enter__(self) -> ProcessTreeSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._result is None and self._thread is not None:
            self.stop()

    # -- sampling -------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample(baseline=False)
            self._host.sample()

    def _tree(self) -> list[psutil.Process]:
        root = self._root
        if root is None:
            return []
        if self._tree_cache and time.monotonic() < self._next_tree_refresh:
            return self._tree_cache
        began = time.thread_time()
        try:
            if not root.is_running():
                self._tree_cache = []
            else:
                self._tree_cache = [root, *_processes(subtree_pids(root.pid)[1:])]
        except psutil.Error:
            self._tree_cache = [root]
        cost = time.thread_time() - began
        spacing = max(_TREE_REFRESH_EVERY * self.interval, cost / _TREE_REFRESH_SHARE)
        self._next_tree_refresh = time.monotonic() + spacing
        return self._tree_cache

    def _sample(self, *, baseline: bool, final: bool = False) -> None:
        rss = threads = fds = alive = 0
        readings: dict[tuple[int, float], _Counters] = {}
        switches: dict[tuple[int, float, int], tuple[int, int]] = {}
        runtimes: dict[tuple[int, float, int], int] = {}
        waits: dict[tuple[int, float, int], int] = {}
        # The threads' counters are read at the baseline, at the end, and between them as
        # _THREAD_READ_SHARE allows; a thread keeps its last reading until the next.
        read_threads = baseline or final or time.monotonic() >= self._next_thread_read
        thread_read_s = 0.0
        for proc in self._tree():
            try:
                with proc.oneshot():
                    key = (proc.pid, proc.create_time())
                    parent = proc.ppid()
                    cpu = proc.cpu_times()
                    per_thread = {}
                    if read_threads:
                        began = time.thread_time()
                        per_thread = _thread_readings(proc)
                        thread_read_s += time.thread_time() - began
                    proc_rss = proc.memory_info().rss
                    proc_threads = proc.num_threads()
                    proc_fds = _num_fds(proc)
            except psutil.Error:
                continue  # exited between listing and reading: none of its readings count
            # Merged only now, so a process's thread clocks are never newer than its ticks.
            self._parents[key] = parent
            for tid, (counts, clocks) in per_thread.items():
                switches[(*key, tid)] = counts
                if clocks is not None:
                    runtimes[(*key, tid)], waits[(*key, tid)] = clocks
            rss += proc_rss
            threads += proc_threads
            fds += proc_fds
            alive += 1
            readings[key] = _Counters(
                cpu.user,
                cpu.system,
                getattr(cpu, "children_user", 0.0),
                getattr(cpu, "children_system", 0.0),
            )
            self._procs.setdefault(key, proc)
        if read_threads:
            self._next_thread_read = time.monotonic() + thread_read_s / _THREAD_READ_SHARE
        established, time_wait = self._count_sockets(baseline=baseline, final=final)
        host_in_use, host_time_wait = tcp_socket_counts() or (0, 0)
        with self._lock:
            for key, counters in readings.items():
                if baseline:
                    self._base[key] = counters
                # A process born after start() has a zero baseline: all of it is in the window.
                self._last[key] = counters
            self._seen_last = set(readings)
            if baseline:
                self._ctx_base.update(switches)
                self._run_base.update(runtimes)
                self._wait_base.update(waits)
            self._ctx_last.update(switches)
            self._run_last.update(runtimes)
            self._wait_last.update(waits)
            self._samples += 1
            peaks = self._peaks
            peaks.processes = max(peaks.processes, alive)
            peaks.rss_bytes = max(peaks.rss_bytes, rss)
            peaks.threads = max(peaks.threads, threads)
            peaks.fds = max(peaks.fds, fds)
            peaks.established = max(peaks.established, established)
            peaks.time_wait = max(peaks.time_wait, time_wait)
            peaks.host_in_use = max(peaks.host_in_use, host_in_use)
            peaks.host_time_wait = max(peaks.host_time_wait, host_time_wait)

    def _count_sockets(self, *, baseline: bool, final: bool) -> tuple[int, int]:
        """The port's (ESTABLISHED, TIME_WAIT) sockets, or zeros when no walk is due: none
        for the baseline (the peaks are the load's), always for the final sample (TIME_WAIT
        sockets pile up until the end), and between them as ``_SOCKET_WALK_SHARE`` allows."""
        if not self.port or baseline or (not final and time.monotonic() < self._next_socket_walk):
            return 0, 0
        began = time.thread_time()
        counts = count_sockets(self.port)
        cost = time.thread_time() - began
        self._next_socket_walk = time.monotonic() + cost / _SOCKET_WALK_SHARE
        return counts

    def _runtime_if_consistent(self) -> float | None:
        """The tree's CPU seconds by the threads' nanosecond clocks, or None where the
        ticks must stand: no schedstat here, a child reaped (its time is in ticks only), or
        a process whose threads' clocks and ticks disagree by more than rounding (a thread
        that ended between two samples, a clock read that failed). Called under the lock."""
        if not _HAS_SCHEDSTAT or not self._run_last:
            return None
        runtime_ns: dict[tuple[int, float], int] = {}
        for tkey, clock in self._run_last.items():
            pkey = (tkey[0], tkey[1])
            runtime_ns[pkey] = runtime_ns.get(pkey, 0) + clock - self._run_base.get(tkey, 0)
        for key, counters in self._last.items():
            base = self._base.get(key, _Counters())
            if counters.children_user + counters.children_system > (
                base.children_user + base.children_system
            ):
                return None
            ticks = counters.user + counters.system - base.user - base.system
            # utime and stime are each cut down to a whole tick at both ends of the window.
            if abs(runtime_ns.get(key, 0) / 1e9 - ticks) > 2 * _TICK_S + 0.02 * ticks:
                return None
        return sum(runtime_ns.values()) / 1e9

    def _summarise(self, completed_requests: int) -> ServerStats:
        total = _Counters()
        with self._lock:
            survivors = {pid for pid, _ in self._seen_last}
            for key, last in self._last.items():
                base = self._base.get(key, _Counters())
                if key not in self._seen_last and self._parents.get(key) in survivors:
                    # Gone before the final sample while its parent lives on: reaped by it,
                    # whose children times now hold this process's whole life. Count only
                    # that, less what it had spent before the load started.
                    total.user -= base.user
                    total.system -= base.system
                    continue
                total.user += last.user - base.user + last.children_user - base.children_user
                total.system += (
                    last.system - base.system + last.children_system - base.children_system
                )
            runtime_s = self._runtime_if_consistent()
            # A thread born in the window waited all of its wait inside it.
            clocks_ns = [
                (self._run_last[k] - self._run_base.get(k, 0), w - self._wait_base.get(k, 0))
                for k, w in self._wait_last.items()
            ]
            clocks = [(ran / 1e9, waited / 1e9) for ran, waited in clocks_ns]
            wait_s = sum(waited for _, waited in clocks)
            voluntary = involuntary = 0
            for tkey, (vol, invol) in self._ctx_last.items():
                base_vol, base_invol = self._ctx_base.get(tkey, (0, 0))
                voluntary += vol - base_vol
                involuntary += invol - base_invol
            peaks = self._peaks
            samples = self._samples
        user, system = max(0.0, total.user), max(0.0, total.system)
        cpu_s = user + system
        if runtime_s is not None:
            if cpu_s > 0:
                user, system = user * runtime_s / cpu_s, system * runtime_s / cpu_s
            else:
                user, system = runtime_s, 0.0
            cpu_s = runtime_s
        per_request = cpu_s * 1000.0 / completed_requests if completed_requests > 0 else math.nan
        return ServerStats(
            pid=self.pid,
            processes_peak=peaks.processes,
            cpu_user_s=user,
            cpu_system_s=system,
            cpu_ms_per_request=per_request,
            rss_peak_mb=peaks.rss_bytes / _MIB,
            ctx_switches_voluntary=max(0, voluntary),
            ctx_switches_involuntary=max(0, involuntary),
            threads_peak=peaks.threads,
            fds_peak=peaks.fds,
            sockets_established_peak=peaks.established,
            sockets_time_wait_peak=peaks.time_wait,
            host_sockets_in_use_peak=peaks.host_in_use,
            host_sockets_time_wait_peak=peaks.host_time_wait,
            samples=samples,
            cpu_wait_s=max(0.0, wait_s) if _HAS_SCHEDSTAT else math.nan,
            sampled_s=self._span[1] - self._span[0],
            **self._host.figures(cpu_s, clocks),
        )


def _thread_readings(
    proc: psutil.Process,
) -> dict[int, tuple[tuple[int, int], tuple[int, int] | None]]:
    """Per thread id: (voluntary, involuntary) context switches, and nanoseconds on a CPU
    and waiting for one (None where the kernel does not say, or the thread ended between
    the two reads).

    /proc/<pid>/status (what psutil reads) counts the main thread only, which would show a
    thread-per-connection server as barely switching at all.
    """
    if not sys.platform.startswith("linux"):
        ctx = proc.num_ctx_switches()
        return {0: ((ctx.voluntary, ctx.involuntary), None)}
    found: dict[int, tuple[tuple[int, int], tuple[int, int] | None]] = {}
    task_dir = f"/proc/{proc.pid}/task"
    try:
        tids = os.listdir(task_dir)
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"{task_dir}/{tid}/status", "rb") as f:
                status = f.read()
        except OSError:
            continue
        # Two searches of the whole file, not a Python loop over its ~55 lines: this runs
        # for every thread of the server ten times a second, in the generator's process.
        vol = _status_field(status, b"\nvoluntary_ctxt_switches:")
        invol = _status_field(status, b"\nnonvoluntary_ctxt_switches:")
        found[int(tid)] = ((vol, invol), _schedstat_ns(f"{task_dir}/{tid}/schedstat"))
    return found


def _status_field(status: bytes, name: bytes) -> int:
    """The number after ``name`` (a line's start, with its newline) in a status file, or
    0 where there is none."""
    start = status.find(name)
    if start < 0:
        return 0
    start += len(name)
    end = status.find(b"\n", start)
    try:
        return int(status[start:end] if end >= 0 else status[start:])
    except ValueError:
        return 0


def _schedstat_ns(path: str) -> tuple[int, int] | None:
    """A thread's schedstat: its time on a CPU and its time runnable but waiting for one
    (its first two fields), in nanoseconds."""
    try:
        with open(path, "rb") as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def _processes(pids: list[int]) -> list[psutil.Process]:
    """Those of ``pids`` still running."""
    found = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            found.append(psutil.Process(pid))
    return found


def _num_fds(proc: psutil.Process) -> int:
    if sys.platform == "win32":
        return 0
    try:
        return proc.num_fds()
    except psutil.AccessDenied:
        return 0


def count_sockets(port: int) -> tuple[int, int]:
    """Server-side TCP sockets on ``port``: (ESTABLISHED, TIME_WAIT).

    Only sockets whose *local* port is the server's count, i.e. the server's ends of its
    connections. TIME_WAIT sockets belong to no process, so they are found by port.
    On Linux the kernel is asked through netlink sock_diag with a port filter: reading
    /proc/net/tcp (or psutil.net_connections, which also maps every socket of every process
    to a pid) costs milliseconds per sample on a machine with a thousand sockets, all of it
    inside the generator process.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, ValueError, struct.error):
            states = port_sockets(port, frozenset((TCP_ESTABLISHED, TCP_TIME_WAIT)))
            established = sum(1 for state, _ in states if state == TCP_ESTABLISHED)
            return established, len(states) - established
    established = time_wait = 0
    with contextlib.suppress(psutil.Error, OSError):
        for conn in psutil.net_connections(kind="tcp"):
            if not conn.laddr or conn.laddr.port != port:
                continue
            if conn.status == psutil.CONN_ESTABLISHED:
                established += 1
            elif conn.status == psutil.CONN_TIME_WAIT:
                time_wait += 1
    return established, time_wait


publish(globals())
