"""Generator cost with a new connection per request: netbench vs ab vs wrk (issue 19).

Seeds 000 and 001 measure servers that open and close a connection for every request (ab
without ``-k``, httperf and weighttp at one request per connection). Each tool here runs
50 connections, one thread, pinned to one core, against the Go hello server (net/http,
GOMAXPROCS=1) pinned to the other: ``ab -c 50`` (no keep-alive), ``wrk -t1 -c50 -H
'Connection: close'``, and ``http_load(keepalive=False)``. CPU per completed request: ab's and
wrk's whole process (``wait4`` rusage); netbench's inside the ``http_load`` call, as
``bench_vs_wrk.py`` takes it. The order of the three rotates per trial.

Every run gets a server of its own, on a new port: a run of 5 s leaves some 100,000 sockets in
TIME_WAIT, and a connect to the same address then has to search the 28,000 ephemeral ports
for a free 4-tuple, which made whichever tool ran second pay up to twice the kernel time.

    python benchmarks/bench_new_connection.py [--trials 10] [--duration 5] [--loop uvloop]
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from generator import run_pinned
from launch import PinnedServer, cpus_for_pinning, need_tool
from measured import run_measured
from wrk_runner import run_wrk

CONNECTIONS = 50
_AB_DONE = re.compile(r"Complete requests:\s+(\d+)")
_AB_FAILED = re.compile(r"Failed requests:\s+(\d+)")
_AB_TIME = re.compile(r"Time taken for tests:\s+([\d.]+) seconds")


@dataclass(frozen=True)
class ToolRun:
    requests: int
    seconds: float
    cpu_s: float
    window_cpu_s: float = 0.0  # netbench: the engine's own figure, its measured window only

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def cpu_us(self) -> float:
        return self.cpu_s / self.requests * 1e6


def run_ab(url: str, cpu: int, duration_s: float) -> ToolRun:
    ab = need_tool("ab", "apt-get install apache2-utils")
    taskset = need_tool("taskset", "apt-get install util-linux")
    # -t sets the request count to 50,000 as it is read: a -n after it lifts that cap
    # (before it, ab stopped at 50,000 requests whatever -t said), -t still ends the run.
    argv = [taskset, "-c", str(cpu), ab, "-q", "-c", str(CONNECTIONS), "-t", f"{duration_s:g}"]
    done = run_measured([*argv, "-n", "100000000", url], timeout_s=duration_s + 60)
    completed, taken = _AB_DONE.search(done.stdout), _AB_TIME.search(done.stdout)
    if done.returncode != 0 or completed is None or taken is None:
        sys.exit(f"ab failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    failed = _AB_FAILED.search(done.stdout)
    if failed and int(failed.group(1)):
        sys.exit(f"ab had failed requests:\n{done.stdout}")
    return ToolRun(int(completed.group(1)), float(taken.group(1)), done.cpu_s)


def run_wrk_close(url: str, cpu: int, duration_s: float) -> ToolRun:
    wrk = run_wrk(url, cpu=cpu, connections=CONNECTIONS, duration_s=duration_s, close_each=True)
    if wrk.errors:
        sys.exit(f"wrk had {wrk.errors} errors")
    return ToolRun(wrk.requests, wrk.duration_s, wrk.cpu_s)


def run_netbench(url: str, cpu: int, duration_s: float, loop: str) -> ToolRun:
    run = run_pinned(
        cpu, url, connections=CONNECTIONS, duration=duration_s, keepalive=False, loop=loop
    )
    r = run.result
    if r.errors_total or not r.ok:
        sys.exit(f"netbench run had errors: {dict(r.errors)} {dict(r.error_samples)}")
    return ToolRun(r.ok, r.duration_s, run.call_cpu_s, r.generator.cpu_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument("--loop", default="uvloop", choices=["uvloop", "asyncio", "trio"])
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            "a new connection per request: netbench vs ab vs wrk, 50 connections, 1 thread",
            f"Go net/http server on cpu {server_cpu}, a fresh one per run; generators on cpu "
            f"{gen_cpu}; {args.duration:g} s per run, {args.trials} trials, "
            f"netbench on {args.loop}",
        )
    )
    tools = {
        "ab": lambda url: run_ab(url, gen_cpu, args.duration),
        "wrk": lambda url: run_wrk_close(url, gen_cpu, args.duration),
        "netbench": lambda url: run_netbench(url, gen_cpu, args.duration, args.loop),
    }
    us: dict[str, list[float]] = {name: [] for name in tools}
    rps: dict[str, list[float]] = {name: [] for name in tools}
    vs_ab: list[float] = []
    vs_wrk: list[float] = []
    window_us: list[float] = []
    window_vs_ab: list[float] = []
    names = list(tools)
    for trial in range(args.trials):
        order = names[trial % 3 :] + names[: trial % 3]
        runs: dict[str, ToolRun] = {}
        for name in order:
            with PinnedServer("hello", cpu=server_cpu, server="go") as server:
                runs[name] = tools[name](server.url)
        print(
            f"  trial {trial + 1}: "
            + " | ".join(
                f"{name} {runs[name].rps:,.0f} req/s {runs[name].cpu_us:.1f} us/req"
                for name in names
            )
        )
        for name in names:
            us[name].append(runs[name].cpu_us)
            rps[name].append(runs[name].rps)
        vs_ab.append(runs["netbench"].cpu_us / runs["ab"].cpu_us)
        nb = runs["netbench"]
        window_us.append(nb.window_cpu_s / nb.requests * 1e6)
        window_vs_ab.append(window_us[-1] / runs["ab"].cpu_us)
        vs_wrk.append(runs["netbench"].cpu_us / runs["wrk"].cpu_us)
    for name in names:
        print(row(f"{name} CPU per request", us[name], "us"))
    # Set-up and teardown (about 0.1 s a call) weigh on short or slow runs: the window
    # alone shows the per-connection cost apart from them.
    print(row("netbench CPU per request (engine window)", window_us, "us"))
    for name in names:
        print(row(f"{name} throughput", rps[name], "req/s"))
    print(row("CPU per request, netbench / ab", vs_ab, "x   (goal <= 1.3, aim 1.0)"))
    print(row("CPU per request, netbench / wrk", vs_wrk, "x"))
    print(row("CPU per request, netbench window / ab", window_vs_ab, "x"))


if __name__ == "__main__":
    main()
