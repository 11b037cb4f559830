"""CPU of a short ``netbench`` command: ``netbench --help`` and ``netbench http URL -n 1``,
beside wrk's usage text and ab's one request (issue 35: at most 0.10 s and 0.15 s).

    python benchmarks/bench_cli_start.py [--rounds 7]

Each round runs every command once, in turn, against the C server (``servers/httpd.c``)
pinned to one core, the command on the other; the CPU is the whole process's, user +
system, from wait4 (interpreter start-up, imports, the request, the report, exit). wrk
has no request count, so its figure is its start without a load (its usage text); ab's
``-n 1 -c 1`` is the one-request peer.

The package's bytecode is cached (a ``PYTHONPYCACHEPREFIX`` warmed once), as an installed
wheel has its .pyc files: with ``PYTHONDONTWRITEBYTECODE=1`` and an editable install with
no ``__pycache__``, every start compiles the package's source first (about 0.15 s more on
the 2-core machine). Prints the median [min .. max] over rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from launch import PinnedServer, cpus_for_pinning, need_tool


def cpu_of(argv: Sequence[str], cpu: int, env: dict[str, str]) -> float:
    """User + system CPU seconds of one run of ``argv`` pinned to ``cpu``."""
    proc = subprocess.Popen(
        ["taskset", "-c", str(cpu), *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    # taskset execs the command in place: the pid's rusage is the command's own.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s [{min(values):.3f} .. {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    netbench = shutil.which("netbench") or need_tool("netbench", "pip install -e .")
    wrk = need_tool("wrk", "apt-get install wrk")
    ab = need_tool("ab", "apt-get install apache2-utils")
    _, generator_cpu = cpus_for_pinning()

    with tempfile.TemporaryDirectory() as cache, PinnedServer("hello") as server:
        cached = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        cached.pop("PYTHONDONTWRITEBYTECODE", None)
        as_is = dict(os.environ)
        commands = {
            "netbench --help": ([netbench, "--help"], cached),
            "netbench http URL -n 1": (
                [netbench, "http", server.url, "-n", "1"],
                cached,
            ),
            "wrk (usage, no load)": ([wrk], as_is),
            "ab -n 1 -c 1 URL": ([ab, "-n", "1", "-c", "1", server.url], as_is),
        }
        for argv, env in commands.values():  # warm the cache and the page cache
            cpu_of(argv, generator_cpu, env)
        figures: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (argv, env) in commands.items():
                figures[name].append(cpu_of(argv, generator_cpu, env))

    print(f"CPU seconds (user + system), median [min .. max] of {args.rounds} rounds")
    width = max(len(name) for name in figures)
    for name, values in figures.items():
        print(f"  {name:<{width}}  {spread(values)}")


if __name__ == "__main__":
    main()
