"""What a ramp (``stages=``) costs the open loop, per request.

A ramp's send times are solved from the integral of its rate (a square root per request,
``_engine/rules/ramp.py``) where a constant rate adds an interval. Two measurements:

- **schedule alone**: ns per due time, ``Schedule.next`` (constant) against
  ``RampSchedule.next`` (a ramp 0 -> R -> 0), in this process;
- **whole loads**, side by side in every trial (order alternating), each in a fresh process
  pinned to the core the pinned Go hello server (net/http, GOMAXPROCS=1) does not use:
  ``rate=R`` for D seconds against ``rate=R, stages=[(D, R)]`` (the same sends, through
  the ramp's schedule), and a triangle ``0 -> 2R -> 0`` (the same count, rates changing).

CPU per ok response is the process CPU spent inside the ``http_load`` call, as
``bench_feeders.py`` takes it.

    python benchmarks/bench_ramp.py [--trials 3] [--duration 4] [--rate 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from launch import PinnedServer, cpus_for_pinning
from measured import run_measured

CONNECTIONS = 20
SHAPES = ("constant", "flat ramp", "triangle")


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def schedule_ns_per_due(calls: int = 200_000) -> tuple[float, float]:
    """ns per ``next`` call: a constant rate's, and a ramp's."""
    from pytest_netbench import Stage
    from pytest_netbench._engine.rules.ramp import RampSchedule
    from pytest_netbench._engine.rules.schedule import Schedule
    from pytest_netbench._model.stages import RampProfile

    figures = []
    span = calls / 10_000  # seconds of a ramp 0 -> 20,000 -> 0 holding `calls` requests
    ramp = RampProfile(0.0, (Stage(span / 2, 20_000), Stage(span / 2, 0)))
    for schedule in (Schedule(10_000, "uniform"), RampSchedule(ramp, "uniform")):
        due = schedule.first(0)
        begin = time.perf_counter_ns()
        for _ in range(calls - 1):
            due = schedule.next(due)
        figures.append((time.perf_counter_ns() - begin) / (calls - 1))
    return figures[0], figures[1]


def child(cpu: int, options: dict[str, Any]) -> None:
    """One load in this process, pinned to ``cpu``; prints its figures as one JSON line."""
    os.sched_setaffinity(0, {cpu})
    from pytest_netbench import http_load

    rate, duration, shape = options["rate"], options["duration"], options["shape"]
    load: dict[str, Any] = {"connections": CONNECTIONS, "loop": options["loop"]}
    if shape == "constant":
        load.update(rate=rate, duration=duration)
    elif shape == "flat ramp":
        load.update(rate=rate, stages=[(duration, rate)])
    else:
        load.update(rate=0, stages=[(duration / 2, 2 * rate), (duration / 2, 0)])
    before = _cpu_s()
    result = http_load(options["url"], **load)
    call_cpu = _cpu_s() - before
    report = {
        "ok": result.ok,
        "sent": result.sent,
        "errors": result.errors_total,
        "call_cpu_s": call_cpu,
        "valid": result.valid,
        "loop": result.generator.loop,
    }
    print("RAMP_REPORT " + json.dumps(report), flush=True)


def run_child(cpu: int, **options: Any) -> dict[str, Any]:
    done = run_measured([sys.executable, __file__, "--child", str(cpu), json.dumps(options)])
    lines = [line for line in done.stdout.splitlines() if line.startswith("RAMP_REPORT ")]
    if done.returncode != 0 or not lines:
        sys.exit(f"load failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(lines[-1].split(" ", 1)[1])
    if report["errors"] or not report["ok"]:
        sys.exit(f"load had errors: {report}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per load")
    parser.add_argument("--rate", type=float, default=10_000.0, help="the constant rate")
    parser.add_argument("--loop", default="auto", help="auto (uvloop), asyncio or trio")
    args = parser.parse_args()
    constant_ns, ramp_ns = schedule_ns_per_due()
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            f"open loop at {args.rate:,.0f} req/s: a constant rate vs the same through a ramp",
            f"Go net/http server on cpu {server_cpu}, generator on cpu {gen_cpu}, "
            f"{args.duration:g} s per load, {args.trials} trials, loop {args.loop}",
        )
    )
    print(f"  schedule alone: constant {constant_ns:.0f} ns/due, ramp {ramp_ns:.0f} ns/due")
    us: dict[str, list[float]] = {shape: [] for shape in SHAPES}
    ratios: dict[str, list[float]] = {shape: [] for shape in SHAPES[1:]}
    with PinnedServer("hello", cpu=server_cpu, server="go") as server:
        options = {"url": server.url, "loop": args.loop, "rate": args.rate}
        run_child(gen_cpu, **options, shape="constant", duration=1.0)  # warm both sides
        for trial in range(args.trials):
            order = SHAPES if trial % 2 == 0 else tuple(reversed(SHAPES))
            runs = {
                s: run_child(gen_cpu, **options, shape=s, duration=args.duration) for s in order
            }
            per = {s: r["call_cpu_s"] / r["ok"] * 1e6 for s, r in runs.items()}
            for shape in SHAPES:
                us[shape].append(per[shape])
            for shape in SHAPES[1:]:
                ratios[shape].append(per[shape] / per["constant"])
            print(
                f"  trial {trial + 1} [{runs['constant']['loop']}]: "
                + " | ".join(
                    f"{s} {runs[s]['sent']:,} sent {per[s]:.2f} us/req"
                    + ("" if runs[s]["valid"] else " (invalid)")
                    for s in SHAPES
                )
            )
    for shape in SHAPES:
        print(row(f"{shape}: CPU per request", us[shape], "us"))
    print(row("CPU per request, flat ramp / constant", ratios["flat ramp"], "x"))
    print(row("CPU per request, triangle / constant", ratios["triangle"], "x"))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), json.loads(sys.argv[3]))
    else:
        main()
