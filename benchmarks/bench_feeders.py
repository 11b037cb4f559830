"""What sending requests rendered from feeders costs a whole load, per request.

Two loads against the same pinned Go hello server (net/http, GOMAXPROCS=1), side by side
in every trial (their order alternating), each in a fresh process pinned to the other core
(one worker, 50 keep-alive connections, the fused closed-loop path):

- **fixed**: one fixed request, ``POST /items/cat47/50000`` with the JSON body of that
  row of the file (the size and shape of most of the fed requests);
- **fed**: ``POST /items/${row.category}/${row.id}`` with the JSON body
  ``{"id": ${row.id}, "name": "${row.name}", "email": "${row.email}"}``, filled from a
  CSV feeder of 100,000 rows in file order (wrapping).

CPU per ok response is the process CPU spent inside the ``http_load`` call (set-up,
connects, run, teardown), as ``bench_vs_wrk.py`` takes it, and the engine's own window
figure beside it. Issue 18's budget: fed / fixed <= 1.10.

    python benchmarks/bench_feeders.py [--trials 3] [--duration 4] [--loop auto]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from launch import PinnedServer, cpus_for_pinning
from measured import run_measured

CONNECTIONS = 50
ROWS = 100_000
JSON_BODY = '{"id": ${row.id}, "name": "${row.name}", "email": "${row.email}"}'


def write_rows(path: Path) -> Path:
    with path.open("w") as file:
        file.write("id,category,name,email\n")
        file.writelines(
            f"{i},cat{i % 97},user number {i},user{i}@example.com\n" for i in range(1, ROWS + 1)
        )
    return path


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(cpu: int, options: dict[str, Any]) -> None:
    """One load in this process, pinned to ``cpu``; prints its figures as one JSON line."""
    os.sched_setaffinity(0, {cpu})
    from pytest_netbench import feeders, http_load

    url, csv_path, fed = options["url"], options["csv"], options["fed"]
    common: dict[str, Any] = {
        "method": "POST",
        "headers": {"Content-Type": "application/json"},
        "connections": CONNECTIONS,
        "duration": options["duration"],
        "loop": options["loop"],
    }
    if fed:
        load = {
            "url": url + "items/${row.category}/${row.id}",
            "body": JSON_BODY,
            "feeders": {"row": feeders.csv(csv_path)},
        }
    else:
        # A row from the middle of the file: the same size as most of the fed requests.
        middle = '{"id": 50000, "name": "user number 50000", "email": "user50000@example.com"}'
        load = {"url": url + f"items/cat{50000 % 97}/50000", "body": middle}
    before = _cpu_s()
    result = http_load(**load, **common)
    call_cpu = _cpu_s() - before
    report = {
        "ok": result.ok,
        "errors": result.errors_total,
        "rps": result.rps,
        "call_cpu_s": call_cpu,
        "window_cpu_s": result.generator.cpu_s,
        "loop": result.generator.loop,
        "bytes_per_request": result.bytes_written / max(result.sent, 1),
    }
    print("FEEDERS_REPORT " + json.dumps(report), flush=True)


def run_child(cpu: int, **options: Any) -> dict[str, Any]:
    done = run_measured([sys.executable, __file__, "--child", str(cpu), json.dumps(options)])
    lines = [line for line in done.stdout.splitlines() if line.startswith("FEEDERS_REPORT ")]
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
    parser.add_argument("--loop", default="auto", help="auto (uvloop), asyncio or trio")
    args = parser.parse_args()
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            "requests from a CSV feeder vs one fixed request, 50 keep-alive connections",
            f"Go net/http server on cpu {server_cpu}, generator on cpu {gen_cpu}, "
            f"{args.duration:g} s per load, {args.trials} trials, loop {args.loop}",
        )
    )
    ratios, window_ratios, fixed_us, fed_us, rps_ratios = ([] for _ in range(5))
    with (
        tempfile.TemporaryDirectory() as folder,
        PinnedServer("hello", cpu=server_cpu, server="go") as server,
    ):
        csv_path = str(write_rows(Path(folder) / "rows.csv"))
        options = {"url": server.url, "csv": csv_path, "loop": args.loop}
        run_child(gen_cpu, **options, fed=False, duration=1.0)  # warm the server and caches
        for trial in range(args.trials):
            runs: dict[bool, dict[str, Any]] = {}
            for fed in (False, True) if trial % 2 == 0 else (True, False):
                runs[fed] = run_child(gen_cpu, **options, fed=fed, duration=args.duration)
            fixed, fed_run = runs[False], runs[True]
            us = [r["call_cpu_s"] / r["ok"] * 1e6 for r in (fixed, fed_run)]
            window = [r["window_cpu_s"] / r["ok"] * 1e6 for r in (fixed, fed_run)]
            print(
                f"  trial {trial + 1} [{fed_run['loop']}]: fixed {fixed['rps']:,.0f} req/s"
                f" {us[0]:.2f} us/req ({fixed['bytes_per_request']:.0f} B) | fed"
                f" {fed_run['rps']:,.0f} req/s {us[1]:.2f} us/req"
                f" ({fed_run['bytes_per_request']:.0f} B) -> cpu x{us[1] / us[0]:.3f}"
                f" (window x{window[1] / window[0]:.3f})"
            )
            fixed_us.append(us[0])
            fed_us.append(us[1])
            ratios.append(us[1] / us[0])
            window_ratios.append(window[1] / window[0])
            rps_ratios.append(fed_run["rps"] / fixed["rps"])
    print(row("fixed request: CPU per request", fixed_us, "us"))
    print(row("CSV feeder: CPU per request", fed_us, "us"))
    print(row("CPU per request, fed / fixed", ratios, "x   (goal <= 1.10)"))
    print(row("the same, engine window only", window_ratios, "x"))
    print(row("throughput, fed / fixed", rps_ratios, "x"))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), json.loads(sys.argv[3]))
    else:
        main()
