"""What profiling costs the server it samples (issue 31), measured in the same process.

``http_load(..., profile=True)`` runs the load once unsampled (the measured run) and once
more with the server's process tree sampled (the profiled run), and keeps the server's
CPU per ok response of both: their ratio is what sampling cost the server
(``ServerProfile.sampling_cost``). This runs that, trial after trial, for:

- **py-spy**: gunicorn with two sync workers serving ``tests/integration/profiled/
  hot_wsgi.py`` (a request spends most of its CPU in ``render_page``), 4 connections;
- **perf**: ``tests/integration/profiled/hot_httpd.c`` built with symbols (a request spends
  its CPU in ``checksum_body``), one connection (the server serves one at a time); the
  catalog's Go server (its stacks walked by frame pointers) and Debian's nginx (stripped,
  unwound with DWARF), 4 connections each: servers that spend little CPU per request,
  where sampling costs the most.

The order of the two runs is always measured first, so a warming server would flatter
the profiled run, not the measured one.

    python benchmarks/bench_profile_cost.py [--trials 5] [--duration 2]
        [--only py-spy|perf|go|nginx]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row

from pytest_netbench import Server, catalog, http_load

PROFILED = Path(__file__).resolve().parents[1] / "tests" / "integration" / "profiled"


def gunicorn() -> Server:
    command = [sys.executable, "-m", "gunicorn", "-w", "2", "-b", "{host}:{port}", "hot_wsgi:app"]
    return Server(command, cwd=PROFILED, name="gunicorn-hot")


def native(folder: Path) -> Server:
    binary = folder / "hot_httpd"
    source = str(PROFILED / "hot_httpd.c")
    flags = ["-O1", "-g", "-fno-omit-frame-pointer"]
    subprocess.run(["gcc", *flags, "-o", str(binary), source], check=True)
    return Server([str(binary)], port_pattern=r"port (\d+)", name="hot-httpd")


def measure(name: str, server: Server, connections: int, args: argparse.Namespace) -> None:
    costs, shares = [], []
    with server:
        http_load(server.url, server=server, connections=connections, duration=0.5)  # warm
        for trial in range(args.trials):
            r = http_load(
                server.url,
                server=server,
                connections=connections,
                duration=args.duration,
                profile=True,
            )
            profile = r.profile
            assert profile is not None
            if profile.problem:
                sys.exit(f"{name}: no profile: {profile.problem}")
            top = profile.hottest(1)[0]  # (an idle-ish server's: finish_task_switch)
            print(
                f"  {name} trial {trial + 1}: server CPU/request measured"
                f" {profile.measured_cpu_ms_per_request:.3f} ms, profiled"
                f" {profile.cpu_ms_per_request:.3f} ms -> x{profile.sampling_cost:.3f};"
                f" {profile.samples:,} samples, top {top.name} {top.self_share:.0%}"
            )
            costs.append(profile.sampling_cost)
            shares.append(top.self_share * 100)
    print(row(f"{name}: server CPU per request, profiled / measured", costs, "x"))
    print(row(f"{name}: the hot function's self share", shares, "%"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per load")
    parser.add_argument("--only", choices=("py-spy", "perf", "go", "nginx"))
    args = parser.parse_args()
    print(
        header(
            "what sampling costs the server: profiled run over measured run",
            f"{args.trials} trials of {args.duration:g} s loads (each: measured, then profiled)",
        )
    )
    if args.only in (None, "py-spy"):
        measure("py-spy (gunicorn -w 2)", gunicorn(), 4, args)
    if args.only in (None, "perf"):
        with tempfile.TemporaryDirectory() as folder:
            measure("perf (C server)", native(Path(folder)), 1, args)
    for name in ("go", "nginx"):
        if args.only in (None, name):
            measure(f"perf ({name})", Server.from_spec(catalog.get(name)), 4, args)


if __name__ == "__main__":
    main()
