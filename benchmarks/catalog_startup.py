"""Start-to-ready time of every catalog server, and one short load against each.

    python benchmarks/catalog_startup.py                  # all servers, hello app
    python benchmarks/catalog_startup.py --app echo --duration 2 --connections 50
    python benchmarks/catalog_startup.py --python pypy3 asyncio_streams wsgiref

Compiled servers are built before timing (the build is reported separately).
"ready ms" is the launcher's view: Server.start() until the NETBENCH_LISTENING line
was read and a TCP connect succeeded; "line ms" is the server alone: a bare
subprocess until it prints that line. The load runs closed-loop for --duration
seconds; on a small shared machine the figures compare servers, nothing more.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import time

from pytest_netbench import NetbenchError, Server, ServerSpec, catalog, echo_load, http_load

# Which binary a spec's python= names: no public name yet (the interpreter registry of
# issue 10 is where one belongs), and this script times the interpreter's own start.
from pytest_netbench._servers.interpreters import resolve_python


def time_to_line(spec: ServerSpec) -> float:
    """Milliseconds from spawning the bare command to its ready line (no launcher)."""
    python = resolve_python(spec.python)
    argv = [
        a.replace("{host}", "127.0.0.1").replace("{port}", "0").replace("{python}", python)
        for a in spec.command
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if re.search(spec.port_pattern or "NETBENCH_LISTENING", line.decode()):
                return (time.monotonic() - started) * 1000
        return float("nan")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def measure(name: str, args: argparse.Namespace) -> str:
    try:
        return measure_one(name, args)
    except NetbenchError as exc:
        return f"{name:<16} failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"


def measure_one(name: str, args: argparse.Namespace) -> str:
    started = time.monotonic()
    spec = catalog.get(name, app=args.app, python=args.python)
    prepare_s = time.monotonic() - started
    line_ms = statistics.median(time_to_line(spec) for _ in range(args.repeat))
    ready_ms = []
    for _ in range(args.repeat):
        with Server.from_spec(spec) as server:
            assert server.startup_s is not None
            ready_ms.append(server.startup_s * 1000)
    if args.duration <= 0:
        return f"{name:<16} {line_ms:8.0f} {statistics.median(ready_ms):9.0f} {prepare_s:7.1f}"
    with Server.from_spec(spec) as server:
        if args.app == "hello":
            result = http_load(
                server.url, connections=args.connections, duration=args.duration, server=server
            )
        else:
            result = echo_load(
                server.host,
                server.port or 0,
                connections=args.connections,
                duration=args.duration,
                server=server,
            )
    cpu = result.server.cpu_ms_per_request if result.server else float("nan")
    rss = result.server.rss_peak_mb if result.server else float("nan")
    return (
        f"{name:<16} {line_ms:8.0f} {statistics.median(ready_ms):9.0f} {prepare_s:7.1f} "
        f"{result.rps:9.0f} "
        f"{result.p50_ms:8.2f} {result.p99_ms:8.2f} {cpu:8.3f} {rss:7.1f} {result.errors_total:6d}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="catalog servers (default: all with the app)")
    parser.add_argument("--app", choices=("hello", "echo"), default="hello")
    parser.add_argument("--python", default=None, help="interpreter for the Python servers")
    parser.add_argument("--repeat", type=int, default=3, help="starts per server (median)")
    parser.add_argument("--duration", type=float, default=2.0, help="load seconds; 0: none")
    parser.add_argument("--connections", type=int, default=50)
    args = parser.parse_args()
    names = args.names or catalog.names(app=args.app)
    print(
        f"{'server':<16} {'line ms':>8} {'ready ms':>9} {'build s':>7} {'req/s':>9} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'cpu ms/r':>8} {'rss MB':>7} {'errors':>6}"
    )
    for name in names:
        print(measure(name, args), flush=True)


if __name__ == "__main__":
    main()
