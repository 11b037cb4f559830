"""How far the sans-IO HTTP/2 client, and the engine driving it, are from h2load (issue 22).

The catalog's Go HTTP/2 server (``apps/go_h2``, h2c, GOMAXPROCS=1) pinned to one core;
on the other, in turn (order alternating per trial), one thread each:

- ``h2load -c C -m M -t 1 -D D`` (Debian's ``nghttp2-client``), its CPU from ``wait4``;
- ``servers/h2_floor_client.py``: ``_proto/h2_client`` under the least a uvloop client can
  do (C connections, M streams each, closed loop), its CPU from ``wait4`` of the whole
  process (start-up and imports included) and from ``getrusage`` around the run alone;
- with ``--engine``, also the engine itself: ``http_load(url, protocol="h2", streams=M,
  connections=C, duration=D)`` through ``servers/generator.py`` (its whole process, the
  ``http_load`` call, and the engine's window alone).

Issue 22's budget for the engine: at most 1.5x h2load's CPU per completed request.

    python benchmarks/bench_h2_floor.py [--trials 3] [--duration 5]
                                        [--connections 10] [--streams 10] [--engine]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from generator import run_pinned
from launch import PinnedServer, cpus_for_pinning, need_tool
from measured import run_measured

FLOOR = Path(__file__).resolve().parent / "servers" / "h2_floor_client.py"
_FINISHED = re.compile(r"finished in ([\d.]+)s, ([\d.]+) req/s")
_REQUESTS = re.compile(
    r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed"
)


def run_h2load(port: int, cpu: int, connections: int, streams: int, duration: float) -> dict:
    h2load = need_tool("h2load", "apt-get install nghttp2-client")
    taskset = need_tool("taskset", "apt-get install util-linux")
    argv = [taskset, "-c", str(cpu), h2load, f"-c{connections}", f"-m{streams}", "-t1"]
    argv += ["-D", f"{duration:g}", f"http://127.0.0.1:{port}/"]
    done = run_measured(argv, timeout_s=duration + 60)
    finished, requests = _FINISHED.search(done.stdout), _REQUESTS.search(done.stdout)
    if done.returncode != 0 or finished is None or requests is None:
        sys.exit(f"h2load failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    ok = int(requests.group(2))
    return {
        "ok": ok,
        "errors": int(requests.group(3)),
        "rps": float(finished.group(2)),
        "cpu_us": done.cpu_s / ok * 1e6,
    }


def run_floor(port: int, cpu: int, connections: int, streams: int, duration: float) -> dict:
    argv = [sys.executable, str(FLOOR), str(cpu), str(port), str(connections), str(streams)]
    done = run_measured([*argv, f"{duration:g}"], timeout_s=duration + 60)
    marker = "H2_REPORT "
    lines = [line for line in done.stdout.splitlines() if line.startswith(marker)]
    if done.returncode != 0 or not lines:
        sys.exit(f"the floor client failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report = json.loads(lines[-1][len(marker) :])
    ok = report["ok"]
    return {
        "ok": ok,
        "errors": report["errors"],
        "rps": ok / report["elapsed_s"],
        "cpu_us": done.cpu_s / ok * 1e6,
        "run_cpu_us": report["cpu_s"] / ok * 1e6,
    }


def run_engine(port: int, cpu: int, connections: int, streams: int, duration: float) -> dict:
    url = f"http://127.0.0.1:{port}/"
    run = run_pinned(
        cpu, url, protocol="h2", streams=streams, connections=connections, duration=duration
    )
    r = run.result
    if r.errors_total or not r.ok:
        sys.exit(f"the engine's run had errors: {dict(r.errors)} {dict(r.error_samples)}")
    return {
        "ok": r.ok,
        "errors": r.errors_total,
        "rps": r.rps,
        "cpu_us": run.process_cpu_s / r.ok * 1e6,
        "call_cpu_us": run.call_cpu_s / r.ok * 1e6,
        "window_cpu_us": r.generator.cpu_s / r.ok * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--engine", action="store_true", help="run the engine too")
    args = parser.parse_args()
    server_cpu, generator_cpu = cpus_for_pinning()
    shape = (args.connections, args.streams, args.duration)
    h2load_runs: list[dict] = []
    floor_runs: list[dict] = []
    engine_runs: list[dict] = []
    with PinnedServer(server="go-h2c", cpu=server_cpu) as server:
        for trial in range(args.trials):
            order = [("h2load", run_h2load), ("floor", run_floor)]
            if args.engine:
                order.append(("engine", run_engine))
            runs = {"h2load": h2load_runs, "floor": floor_runs, "engine": engine_runs}
            for name, run in order if trial % 2 == 0 else order[::-1]:
                runs[name].append(run(server.port, generator_cpu, *shape))
    print(
        header(
            "HTTP/2 floor vs h2load",
            f"{args.connections} connections x {args.streams} streams, {args.duration:g} s, "
            f"Go h2c server on core {server_cpu}, generators on core {generator_cpu}",
        )
    )
    print(row("h2load CPU per request", [r["cpu_us"] for r in h2load_runs], "us"))
    print(row("floor CPU per request, whole process", [r["cpu_us"] for r in floor_runs], "us"))
    print(row("floor CPU per request, run only", [r["run_cpu_us"] for r in floor_runs], "us"))
    ratios = [f["cpu_us"] / h["cpu_us"] for f, h in zip(floor_runs, h2load_runs, strict=True)]
    print(row("floor / h2load, CPU per request", ratios, "x"))
    if engine_runs:
        print(
            row("engine CPU per request, whole process", [r["cpu_us"] for r in engine_runs], "us")
        )
        print(
            row(
                "engine CPU per request, http_load call",
                [r["call_cpu_us"] for r in engine_runs],
                "us",
            )
        )
        print(
            row("engine CPU per request, window", [r["window_cpu_us"] for r in engine_runs], "us")
        )
        ratios = [e["cpu_us"] / h["cpu_us"] for e, h in zip(engine_runs, h2load_runs, strict=True)]
        print(row("engine / h2load, CPU per request", ratios, "x"))
        ratios = [
            e["call_cpu_us"] / h["cpu_us"] for e, h in zip(engine_runs, h2load_runs, strict=True)
        ]
        print(row("engine call / h2load, CPU per request", ratios, "x"))
    print(row("h2load req/s", [r["rps"] for r in h2load_runs]))
    print(row("floor req/s", [r["rps"] for r in floor_runs]))
    if engine_runs:
        print(row("engine req/s", [r["rps"] for r in engine_runs]))
    errors = sum(r["errors"] for r in h2load_runs + floor_runs + engine_runs)
    print(f"  errors (both): {errors}")


if __name__ == "__main__":
    main()
