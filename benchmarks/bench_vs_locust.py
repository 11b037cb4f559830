"""User flows: netbench's ``flow`` against Locust's ``FastHttpUser`` and ``HttpUser``.

The same three-step flow (log in with a JSON POST, then two GETs with the token from its
answer; every session) run by each tool for the same time, with the same number of
virtual users, against the Go net/http hello server pinned to one core, each tool pinned
to the other. Each trial runs four in turn, the order rotating: netbench with httpx and
with its lean client, Locust with each of its clients. It prints, for each, ok requests
per CPU-second of the tool's whole process (start-up included: each tool runs as its own
process, as a user runs it), and the ratios of netbench's to Locust's. The issue's bar:
at least 1.0x FastHttpUser's requests per core, aim for 3x.

    python benchmarks/bench_vs_locust.py [--trials 3] [--duration 10] [--users 20]

Locust is installed into its own virtualenv on first use ($NETBENCH_BENCH_BUILD, default
/tmp/netbench-bench-build/locust-venv), never into netbench's. Needs Go and taskset.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from launch import BUILD_DIR, PinnedServer, cpus_for_pinning, need_tool

HERE = Path(__file__).resolve().parent / "servers"
LOCUST_VERSION = "2.47.0"
LOCUST_VENV = BUILD_DIR / "locust-venv"
NETBENCH_CLIENTS = {"netbench httpx": "httpx", "netbench lean": "lean"}
LOCUST_CLASSES = {"FastHttpUser": "ThreeStepsFast", "HttpUser": "ThreeStepsRequests"}


def locust_bin() -> Path:
    """Locust in its own virtualenv, made on first use."""
    binary = LOCUST_VENV / "bin" / "locust"
    if not binary.exists():
        print(f"installing Locust {LOCUST_VERSION} into {LOCUST_VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(LOCUST_VENV)], check=True)
        pip = LOCUST_VENV / "bin" / "pip"
        subprocess.run([str(pip), "install", "-q", f"locust=={LOCUST_VERSION}"], check=True)
    return binary


def run_pinned(command: list[str], cpu: int) -> tuple[str, float]:
    """Run ``command`` on ``cpu``; its stdout and the CPU seconds its process spent."""
    taskset = need_tool("taskset", "apt-get install util-linux")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([taskset, "-c", str(cpu), *command], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode()
        if proc.returncode != 0:
            said = (text + err.read().decode())[-2000:]
            sys.exit(f"{command[0]} failed ({proc.returncode}): {said}")
    return text, usage.ru_utime + usage.ru_stime


def netbench_run(client: str, url: str, users: int, seconds: float, cpu: int) -> float:
    """ok requests per CPU-second of a netbench flow process on ``client``."""
    script = str(HERE / "three_step_flow.py")
    command = [sys.executable, script, url, str(users), str(seconds), client]
    text, cpu_s = run_pinned(command, cpu)
    figures = json.loads(text.strip().splitlines()[-1])
    if figures["errors"]:
        sys.exit(f"netbench flow had errors: {figures}")
    return figures["ok"] / cpu_s


def locust_run(user_class: str, url: str, users: int, seconds: float, cpu: int) -> float:
    """ok requests per CPU-second of a headless Locust process running ``user_class``."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = str(Path(tmp) / "run")
        command = [
            str(locust_bin()), "-f", str(HERE / "locust_three_steps.py"), user_class,
            "--headless", "-u", str(users), "-r", str(users * 100), "-t", f"{seconds:g}s",
            "--host", url.rstrip("/"), "--csv", prefix, "--only-summary",
            "--loglevel", "ERROR", "--stop-timeout", "1",
        ]  # fmt: skip
        _, cpu_s = run_pinned(command, cpu)
        with open(f"{prefix}_stats.csv", newline="") as stats:
            total = next(r for r in csv.DictReader(stats) if r["Name"] == "Aggregated")
    failures = int(total["Failure Count"])
    if failures:
        sys.exit(f"Locust {user_class} had {failures} failures")
    return int(total["Request Count"]) / cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--users", type=int, default=20)
    args = parser.parse_args()
    server_cpu, generator_cpu = cpus_for_pinning()
    locust_bin()
    tools = [*NETBENCH_CLIENTS, *LOCUST_CLASSES]
    per_cpu: dict[str, list[float]] = {tool: [] for tool in tools}
    with PinnedServer("hello", server="go", cpu=server_cpu) as server:
        for trial in range(args.trials):
            order = tools[trial % len(tools) :] + tools[: trial % len(tools)]
            for tool in order:
                if tool in NETBENCH_CLIENTS:
                    client = NETBENCH_CLIENTS[tool]
                    value = netbench_run(
                        client, server.url, args.users, args.duration, generator_cpu
                    )
                else:
                    value = locust_run(
                        LOCUST_CLASSES[tool], server.url, args.users, args.duration, generator_cpu
                    )
                per_cpu[tool].append(value)
                print(f"  trial {trial + 1}: {tool:<13} {value:,.0f} ok requests per CPU-second")
    print(
        header(
            "three-step user flow: ok requests per CPU-second of the tool's process",
            f"{args.users} users, {args.duration:g} s, Go hello on cpu {server_cpu}, tool on"
            f" cpu {generator_cpu}, Locust {LOCUST_VERSION}",
        )
    )
    for tool in tools:
        print(row(tool, per_cpu[tool], "req/CPU-s"))
    for ours in NETBENCH_CLIENTS:
        for tool in LOCUST_CLASSES:
            ratios = [n / o for n, o in zip(per_cpu[ours], per_cpu[tool], strict=True)]
            print(row(f"{ours} / Locust {tool}", ratios, "x"))


if __name__ == "__main__":
    main()
