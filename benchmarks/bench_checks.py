"""What a check on every response costs a whole load, per request (issue 33).

Loads against the same pinned Go hello server (net/http, GOMAXPROCS=1; it answers
``Hello, World!`` with a Date header), side by side in every trial (their order
alternating), each in a fresh process pinned to the other core (one worker, 50 keep-alive
connections, the fused closed-loop path):

- **plain**: no checks;
- **substring**: ``checks=["body contains Hello"]``, a substring check of every body;
- **three**: ``status 200``, ``body contains Hello`` and ``header Content-Type contains
  text`` (``--three``).

CPU per ok response is the process CPU spent inside the ``http_load`` call (set-up,
connects, run, teardown), as ``bench_vs_wrk.py`` takes it, and the engine's own window
figure beside it. Issue 33's budget: substring / plain <= 1.10.

A read byte for byte one the parser already found to hold one steady 200 is answered
without parsing it again (``fused_http``), and with checks that holds their verdict too: a
Date header changes once a second, so the checks run on a few responses a second per
connection. ``--loop asyncio`` or ``trio`` measure the other loops (trio has no fused path:
every response is parsed, and checked).

    python benchmarks/bench_checks.py [--trials 3] [--duration 4] [--loop auto] [--three]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from launch import PinnedServer, cpus_for_pinning
from measured import run_measured

CONNECTIONS = 50
CHECKS = {
    "plain": [],
    "substring": ["body contains Hello"],
    "three": ["status 200", "body contains Hello", "header Content-Type contains text"],
}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(cpu: int, options: dict[str, Any]) -> None:
    """One load in this process, pinned to ``cpu``; prints its figures as one JSON line."""
    os.sched_setaffinity(0, {cpu})
    from pytest_netbench import http_load

    checks = CHECKS[options["checks"]]
    before = _cpu_s()
    result = http_load(
        options["url"],
        connections=CONNECTIONS,
        duration=options["duration"],
        loop=options["loop"],
        checks=checks or None,
    )
    call_cpu = _cpu_s() - before
    report = {
        "ok": result.ok,
        "errors": result.errors_total,
        "rps": result.rps,
        "call_cpu_s": call_cpu,
        "window_cpu_s": result.generator.cpu_s,
        "loop": result.generator.loop,
        "checks": {name: c.passes for name, c in result.checks.items()},
    }
    print("CHECKS_REPORT " + json.dumps(report), flush=True)


def run_child(cpu: int, **options: Any) -> dict[str, Any]:
    done = run_measured([sys.executable, __file__, "--child", str(cpu), json.dumps(options)])
    lines = [line for line in done.stdout.splitlines() if line.startswith("CHECKS_REPORT ")]
    if done.returncode != 0 or not lines:
        sys.exit(f"load failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(lines[-1].split(" ", 1)[1])
    if report["errors"] or not report["ok"]:
        sys.exit(f"load had errors: {report}")
    if any(passes != report["ok"] for passes in report["checks"].values()):
        sys.exit(f"a check did not pass every ok response: {report}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per load")
    parser.add_argument("--loop", default="auto", help="auto (uvloop), asyncio or trio")
    parser.add_argument("--three", action="store_true", help="add a load with three checks")
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    kinds = ["plain", "substring", *(["three"] if args.three else [])]
    print(
        header(
            "a substring check of every response vs none, 50 keep-alive connections",
            f"Go net/http server on cpu {server_cpu}, generator on cpu {gen_cpu}, "
            f"{args.duration:g} s per load, {args.trials} trials, loop {args.loop}",
        )
    )
    us: dict[str, list[float]] = {kind: [] for kind in kinds}
    ratios: dict[str, list[float]] = {kind: [] for kind in kinds[1:]}
    window_ratios: dict[str, list[float]] = {kind: [] for kind in kinds[1:]}
    with PinnedServer("hello", cpu=server_cpu, server="go") as server:
        options = {"url": server.url, "loop": args.loop}
        run_child(gen_cpu, **options, checks="plain", duration=1.0)  # warm the server
        for trial in range(args.trials):
            order = kinds if trial % 2 == 0 else kinds[::-1]
            runs = {
                kind: run_child(gen_cpu, **options, checks=kind, duration=args.duration)
                for kind in order
            }
            line = [f"  trial {trial + 1} [{runs['plain']['loop']}]:"]
            base = runs["plain"]["call_cpu_s"] / runs["plain"]["ok"] * 1e6
            base_window = runs["plain"]["window_cpu_s"] / runs["plain"]["ok"] * 1e6
            for kind in kinds:
                per = runs[kind]["call_cpu_s"] / runs[kind]["ok"] * 1e6
                us[kind].append(per)
                line.append(f"{kind} {runs[kind]['rps']:,.0f} req/s {per:.2f} us/req")
                if kind != "plain":
                    window = runs[kind]["window_cpu_s"] / runs[kind]["ok"] * 1e6
                    ratios[kind].append(per / base)
                    window_ratios[kind].append(window / base_window)
            print(" | ".join(line))
    for kind in kinds:
        print(row(f"{kind}: CPU per request", us[kind], "us"))
    for kind in kinds[1:]:
        goal = "   (goal <= 1.10)" if kind == "substring" else ""
        print(row(f"CPU per request, {kind} / plain", ratios[kind], f"x{goal}"))
        print(row("the same, engine window only", window_ratios[kind], "x"))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), json.loads(sys.argv[3]))
    else:
        main()
