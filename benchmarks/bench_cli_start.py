"""CPU of a short ``netbench`` command: ``netbench --help`` and ``netbench http URL -n 1``,
beside wrk's usage text and ab's one request (issue 35: at most 0.10 s and 0.15 s).

    python benchmarks/bench_cli_start.py [--rounds 7] [--baseline TREE]

Each round runs every command once, in turn (the order reversed every other round),
against Go's net/http hello server (``servers/hello_go``) pinned to one core, the command
on the other; the CPU is the whole process's, user + system, from wait4 (interpreter
start-up, imports, the request, the report, exit). wrk has no request count, so its
figure is its start without a load (its usage text); ab's ``-n 1 -c 1`` is the
one-request peer. (The C server keeps ab's HTTP/1.0 connection open, so ab would wait
out its 30 s timeout every round.)

``--baseline TREE`` (a checkout of another commit: ``git worktree add TREE COMMIT``) runs
that commit's command too, in the same rounds, so a change's before and after meet the
same machine. Both trees then start the command the same way,
``python -c "from pytest_netbench.cli import command; command()"`` with the tree's
``src/`` on ``PYTHONPATH`` (the ``netbench`` script's own start is the same import).

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


def netbench_of(tree: Path, env: dict[str, str], by_path: bool) -> tuple[list[str], dict[str, str]]:
    """How to start ``tree``'s command: the installed ``netbench`` script when one tree is
    measured, else the same import from the tree's ``src/`` for every tree alike."""
    if not by_path:
        script = shutil.which("netbench") or need_tool("netbench", "pip install -e .")
        return [script], env
    start = "from pytest_netbench.cli import command; command()"
    return [sys.executable, "-c", start], {**env, "PYTHONPATH": str(tree / "src")}


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s [{min(values):.3f} .. {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="a checkout of another commit")
    args = parser.parse_args()
    if args.baseline is not None and not (args.baseline / "src" / "pytest_netbench").is_dir():
        sys.exit(f"--baseline {args.baseline}: no src/pytest_netbench there (git worktree add)")
    wrk = need_tool("wrk", "apt-get install wrk")
    ab = need_tool("ab", "apt-get install apache2-utils")
    _, generator_cpu = cpus_for_pinning()

    with tempfile.TemporaryDirectory() as cache, PinnedServer("hello", server="go") as server:
        cached = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        cached.pop("PYTHONDONTWRITEBYTECODE", None)
        as_is = dict(os.environ)
        trees = {"": Path(__file__).resolve().parents[1]}
        if args.baseline is not None:
            trees[f" ({args.baseline.name})"] = args.baseline.resolve()
        commands: dict[str, tuple[list[str], dict[str, str]]] = {}
        for label, tree in trees.items():
            netbench, env = netbench_of(tree, cached, len(trees) > 1)
            commands[f"netbench --help{label}"] = ([*netbench, "--help"], env)
            commands[f"netbench http URL -n 1{label}"] = (
                [*netbench, "http", server.url, "-n", "1"],
                env,
            )
        commands |= {
            "wrk (usage, no load)": ([wrk], as_is),
            "ab -n 1 -c 1 URL": ([ab, "-n", "1", "-c", "1", server.url], as_is),
        }
        for argv, env in commands.values():  # warm the cache and the page cache
            cpu_of(argv, generator_cpu, env)
        figures: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.rounds):
            names = list(commands) if i % 2 == 0 else list(commands)[::-1]
            for name in names:
                argv, env = commands[name]
                figures[name].append(cpu_of(argv, generator_cpu, env))

    print(f"CPU seconds (user + system), median [min .. max] of {args.rounds} rounds")
    width = max(len(name) for name in figures)
    for name, values in figures.items():
        print(f"  {name:<{width}}  {spread(values)}")


if __name__ == "__main__":
    main()
