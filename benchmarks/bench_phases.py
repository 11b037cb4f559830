"""What each request's phases (connect, tls, wait, receive) cost the generator, per request.

Loads against the same pinned Go hello server (net/http, GOMAXPROCS=1), each in a fresh
process pinned to the other core (one worker, 50 keep-alive connections), the phases on
(the engine as shipped) and off (the same engine with ``rules.phases.record_phases`` and
``recorder.fold_phases`` made no-ops in that process), side by side in every trial, their
order alternating:

- **fused**: a keep-alive GET, the fused closed-loop path, where phases must cost at most
  3 % CPU per request (issue 31): that path records none per response, the recorder
  derives them from the latency once per timeline row;
- **general** (``--path general``): a keep-alive HEAD, ``Connection.on_response`` and the
  sans-IO framer, which time each answer's first byte and record its phases explicitly.

CPU per ok response is the process CPU spent inside the ``http_load`` call (set-up,
connects, run, teardown), as ``bench_vs_wrk.py`` takes it, and the engine's window figure
beside it.

    python benchmarks/bench_phases.py [--trials 3] [--duration 4] [--loop auto] [--path both]
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


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _phases_off() -> None:
    """Make recording phases a no-op in this process (the load runs in this thread)."""
    from pytest_netbench._engine.asyncio_io import connection
    from pytest_netbench._engine.rules import accounting
    from pytest_netbench._stats import recorder

    def record_nothing(*args: object) -> None:
        pass

    def fold_nothing(into: object, samples: Any, basis: object) -> None:
        samples.clear()

    connection.record_phases = record_nothing  # type: ignore[assignment]
    accounting.record_phases = record_nothing  # type: ignore[assignment]
    recorder.fold_phases = fold_nothing  # type: ignore[assignment]


def child(cpu: int, options: dict[str, Any]) -> None:
    """One load in this process, pinned to ``cpu``; prints its figures as one JSON line."""
    os.sched_setaffinity(0, {cpu})
    from pytest_netbench import http_load

    if not options["phases"]:
        _phases_off()
    before = _cpu_s()
    result = http_load(
        options["url"],
        method="HEAD" if options["path"] == "general" else "GET",
        connections=CONNECTIONS,
        duration=options["duration"],
        loop=options["loop"],
        workers=1,
    )
    call_cpu = _cpu_s() - before
    report = {
        "ok": result.ok,
        "errors": result.errors_total,
        "rps": result.rps,
        "call_cpu_s": call_cpu,
        "window_cpu_s": result.generator.cpu_s,
        "loop": result.generator.loop,
        "wait_count": result.phases.wait.count,
    }
    print("PHASES_REPORT " + json.dumps(report), flush=True)


def run_child(cpu: int, **options: Any) -> dict[str, Any]:
    done = run_measured([sys.executable, __file__, "--child", str(cpu), json.dumps(options)])
    lines = [line for line in done.stdout.splitlines() if line.startswith("PHASES_REPORT ")]
    if done.returncode != 0 or not lines:
        sys.exit(f"load failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(lines[-1].split(" ", 1)[1])
    if report["errors"] or not report["ok"]:
        sys.exit(f"load had errors: {report}")
    return report


def compare(path: str, args: argparse.Namespace, url: str, gen_cpu: int) -> None:
    ratios, window_ratios, on_us, off_us = ([] for _ in range(4))
    options = {"url": url, "loop": args.loop, "path": path}
    for trial in range(args.trials):
        runs: dict[bool, dict[str, Any]] = {}
        for phases in (True, False) if trial % 2 == 0 else (False, True):
            runs[phases] = run_child(gen_cpu, **options, phases=phases, duration=args.duration)
        on, off = runs[True], runs[False]
        us = [r["call_cpu_s"] / r["ok"] * 1e6 for r in (on, off)]
        window = [r["window_cpu_s"] / r["ok"] * 1e6 for r in (on, off)]
        print(
            f"  {path} trial {trial + 1} [{on['loop']}]: phases on {on['rps']:,.0f} req/s"
            f" {us[0]:.2f} us/req (wait samples {on['wait_count']:,}) | off"
            f" {off['rps']:,.0f} req/s {us[1]:.2f} us/req -> cpu x{us[0] / us[1]:.3f}"
            f" (window x{window[0] / window[1]:.3f})"
        )
        on_us.append(us[0])
        off_us.append(us[1])
        ratios.append(us[0] / us[1])
        window_ratios.append(window[0] / window[1])
    goal = "   (goal <= 1.03)" if path == "fused" else ""
    print(row(f"{path}: CPU per request, phases on", on_us, "us"))
    print(row(f"{path}: CPU per request, phases off", off_us, "us"))
    print(row(f"{path}: CPU per request, on / off", ratios, "x" + goal))
    print(row(f"{path}: the same, engine window only", window_ratios, "x"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per load")
    parser.add_argument("--loop", default="auto", help="auto (uvloop), asyncio or trio")
    parser.add_argument("--path", default="both", choices=("fused", "general", "both"))
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            "request phases on vs off, 50 keep-alive connections",
            f"Go net/http server on cpu {server_cpu}, generator on cpu {gen_cpu}, "
            f"{args.duration:g} s per load, {args.trials} trials, loop {args.loop}",
        )
    )
    paths = ("fused", "general") if args.path == "both" else (args.path,)
    with PinnedServer("hello", cpu=server_cpu, server="go") as server:
        run_child(gen_cpu, url=server.url, loop=args.loop, path="fused", phases=True, duration=1.0)
        for path in paths:
            compare(path, args, server.url, gen_cpu)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), json.loads(sys.argv[3]))
    else:
        main()
