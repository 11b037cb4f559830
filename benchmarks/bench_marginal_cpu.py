"""Marginal generator CPU per request, netbench vs the C tools, the way issue 35's table is
measured: each tool runs for a short and a long duration, and the CPU and requests of the
short run are taken from the long one's, so start-up, connects and teardown cancel and
what is left is the cost of one more request.

    python benchmarks/bench_marginal_cpu.py [--rounds 5] [--short 2] [--long 6]
                                            [--rows vary,hello,close,h2] [--baseline TREE]
                                            [--floor]

Rows (``--rows``, all four by default):

- ``vary``: keep-alive, 50 connections, against the Go net/http server in ``vary`` mode
  (every response a different id and length, so no read is byte for byte an earlier one)
  vs ``wrk -t1 -c50``. The default keep-alive case: real APIs rarely answer the same bytes.
- ``hello``: the same against Go's hello (the same 13-byte answer every time, where
  netbench's identical-read shortcut answers without the parser) vs wrk.
- ``close``: a new connection per request, 50 connections, vs ``ab -c 50`` (no ``-k``);
  every run against a fresh server on a new port, since the TIME_WAIT sockets of the
  previous run would make the next tool's connects dearer.
- ``h2``: HTTP/2 cleartext, 10 connections x 10 streams, against the catalog's Go h2c
  server, vs ``h2load -c10 -m10 -t1``.

Every server is pinned to one core with GOMAXPROCS=1, the generator to the other. CPU is
each tool's whole process (``wait4``: netbench's interpreter start-up and imports too,
which cancel). Per round, the tools run in turn, the order alternating between rounds,
short before long; figures are the median [min .. max] over rounds of the per-round
ratio. The machine's other load adds noise that no ratio fully removes: say how busy it
was beside the figures.

``--baseline TREE`` (a checkout of another commit: ``git worktree add TREE COMMIT``) runs
that commit's engine too, as a third tool in the same rounds (its ``src/`` first on the
child's ``PYTHONPATH``), so a change's before and after meet the same machine.

``--floor`` adds, to the keep-alive rows, the least a Python client can do per request
(``servers/bare_client.py``: uvloop, an httptools parser with one callback, latencies
appended to an array, no accounting, no errors, no timeouts), in the same rounds: how
far CPython with uvloop and httptools alone stands from the C tool, whatever the engine
does.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from bare_client import run_bare
from bench_h2_floor import run_h2load
from bench_new_connection import run_ab
from figures import header, row
from generator import run_pinned
from launch import PinnedServer, cpus_for_pinning
from wrk_runner import run_wrk


@dataclass(frozen=True)
class Sample:
    """One run of one tool: its whole process's CPU, the requests it completed, and the
    seconds it ran them in."""

    cpu_s: float
    requests: int
    seconds: float


@dataclass(frozen=True)
class Marginal:
    cpu_us: float  # CPU per request beyond start-up: (cpu long - short) / (req long - short)
    rps: float  # requests per second beyond start-up, likewise


def marginal(short: Sample, long: Sample) -> Marginal:
    requests = long.requests - short.requests
    if requests <= 0:
        sys.exit(f"the long run completed no more requests than the short one: {short} {long}")
    return Marginal(
        cpu_us=(long.cpu_s - short.cpu_s) / requests * 1e6,
        rps=requests / max(long.seconds - short.seconds, 1e-9),
    )


def netbench(cpu: int, url: str, duration: float, **options: object) -> Sample:
    run = run_pinned(cpu, url, duration=duration, **options)
    r = run.result
    if r.errors_total or not r.ok:
        sys.exit(f"netbench run had errors: {dict(r.errors)} {dict(r.error_samples)}")
    return Sample(run.process_cpu_s, r.ok, r.duration_s)


def wrk(cpu: int, url: str, duration: float) -> Sample:
    run = run_wrk(url, cpu=cpu, connections=50, duration_s=duration)
    if run.errors:
        sys.exit(f"wrk had {run.errors} errors")
    return Sample(run.cpu_s, run.requests, run.duration_s)


def floor(cpu: int, url: str, duration: float) -> Sample:
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    run = run_bare(cpu, port, 50, duration)
    return Sample(run["cpu_s"], int(run["ok"]), run["elapsed_s"])


def ab(cpu: int, url: str, duration: float) -> Sample:
    run = run_ab(url, cpu, duration)
    return Sample(run.cpu_s, run.requests, run.seconds)


def h2load(cpu: int, url: str, duration: float) -> Sample:
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    run = run_h2load(port, cpu, 10, 10, duration)
    if run["errors"]:
        sys.exit(f"h2load had {run['errors']} errors")
    return Sample(run["cpu_us"] * run["ok"] / 1e6, run["ok"], run["ok"] / run["rps"])


Tool = Callable[[int, str, float], Sample]


def on_tree(tool: Tool, src: Path) -> Tool:
    """``tool`` (a netbench one) run on the engine in ``src`` instead of this tree's."""

    def run(cpu: int, url: str, duration: float) -> Sample:
        before = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(src)  # the pinned child imports from there
        try:
            return tool(cpu, url, duration)
        finally:
            if before is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = before

    return run


@dataclass(frozen=True)
class Row:
    title: str
    peer: str
    server: dict[str, Any]  # PinnedServer's arguments
    tools: dict[str, Tool]
    fresh_server: bool = False  # a new server (and port) for every run


ROWS = {
    "vary": Row(
        "keep-alive, 50 connections, every response different (Go net/http, vary) vs wrk",
        "wrk",
        {"mode": "vary", "server": "go"},
        {
            "wrk": wrk,
            "netbench": lambda cpu, url, d: netbench(cpu, url, d, connections=50),
        },
    ),
    "hello": Row(
        "keep-alive, 50 connections, the same bytes each time (Go net/http, hello) vs wrk",
        "wrk",
        {"mode": "hello", "server": "go"},
        {
            "wrk": wrk,
            "netbench": lambda cpu, url, d: netbench(cpu, url, d, connections=50),
        },
    ),
    "close": Row(
        "a new connection per request, 50 connections (Go net/http, hello) vs ab",
        "ab",
        {"mode": "hello", "server": "go"},
        {
            "ab": ab,
            "netbench": lambda cpu, url, d: netbench(cpu, url, d, connections=50, keepalive=False),
        },
        fresh_server=True,
    ),
    "h2": Row(
        "HTTP/2 cleartext, 10 connections x 10 streams (Go h2c) vs h2load",
        "h2load",
        {"mode": "hello", "server": "go-h2c"},
        {
            "h2load": h2load,
            "netbench": lambda cpu, url, d: netbench(
                cpu, url, d, connections=10, protocol="h2", streams=10
            ),
        },
    ),
}


def run_row(row_: Row, rounds: int, short: float, long: float, gen_cpu: int) -> None:
    names = list(row_.tools)
    results: dict[str, list[Marginal]] = {name: [] for name in names}
    server: PinnedServer | None = None
    if not row_.fresh_server:
        server = PinnedServer(**row_.server).start()
    try:
        for i in range(rounds):
            order = names if i % 2 == 0 else names[::-1]
            samples: dict[str, list[Sample]] = {name: [] for name in names}
            for duration in (short, long):
                for name in order:
                    if row_.fresh_server:
                        with PinnedServer(**row_.server) as fresh:
                            samples[name].append(row_.tools[name](gen_cpu, fresh.url, duration))
                    else:
                        assert server is not None
                        samples[name].append(row_.tools[name](gen_cpu, server.url, duration))
            for name in names:
                results[name].append(marginal(*samples[name]))
            nb, peer = results["netbench"][-1], results[row_.peer][-1]
            base = ""
            for other in ("baseline", "floor"):
                if other in results:
                    b = results[other][-1]
                    base += f" | {other} {b.cpu_us:.2f} us/req cpu x{b.cpu_us / peer.cpu_us:.3f}"
            print(
                f"  round {i + 1}: {row_.peer} {peer.cpu_us:.2f} us/req {peer.rps:,.0f} req/s"
                f" | netbench {nb.cpu_us:.2f} us/req {nb.rps:,.0f} req/s"
                f" -> cpu x{nb.cpu_us / peer.cpu_us:.3f} rps x{nb.rps / peer.rps:.3f}{base}",
                flush=True,
            )
    finally:
        if server is not None:
            server.stop()
    nb_runs, peer_runs = results["netbench"], results[row_.peer]
    print(row(f"{row_.peer} marginal CPU per request", [m.cpu_us for m in peer_runs], "us"))
    print(row("netbench marginal CPU per request", [m.cpu_us for m in nb_runs], "us"))
    ratios = [n.cpu_us / p.cpu_us for n, p in zip(nb_runs, peer_runs, strict=True)]
    print(row(f"netbench / {row_.peer}, CPU per request", ratios, "x"))
    ratios = [n.rps / p.rps for n, p in zip(nb_runs, peer_runs, strict=True)]
    print(row(f"netbench / {row_.peer}, throughput", ratios, "x"))
    for other in ("baseline", "floor"):  # each beside the peer and netbench, if it ran
        if other not in results:
            continue
        other_runs = results[other]
        print(row(f"{other} marginal CPU per request", [m.cpu_us for m in other_runs], "us"))
        ratios = [o.cpu_us / p.cpu_us for o, p in zip(other_runs, peer_runs, strict=True)]
        print(row(f"{other} / {row_.peer}, CPU per request", ratios, "x"))
        ratios = [n.cpu_us / o.cpu_us for n, o in zip(nb_runs, other_runs, strict=True)]
        print(row(f"netbench / {other}, CPU per request", ratios, "x"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--short", type=float, default=2.0, help="seconds of the short run")
    parser.add_argument("--long", type=float, default=6.0, help="seconds of the long run")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"of {','.join(ROWS)}")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout of another commit: its engine runs too, in the same rounds",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="keep-alive rows: a bare uvloop + httptools client too, in the same rounds",
    )
    args = parser.parse_args()
    if args.baseline is not None and not (args.baseline / "src" / "pytest_netbench").is_dir():
        sys.exit(f"--baseline: no src/pytest_netbench in {args.baseline}; give a checkout")
    server_cpu, gen_cpu = cpus_for_pinning()
    for name in args.rows.split(","):
        if name not in ROWS:
            sys.exit(f"--rows: no row {name!r}; choose from {', '.join(ROWS)}")
        row_ = ROWS[name]
        if args.baseline is not None:
            baseline = on_tree(row_.tools["netbench"], args.baseline.resolve() / "src")
            row_ = dataclasses.replace(row_, tools={**row_.tools, "baseline": baseline})
        if args.floor and row_.peer == "wrk":
            row_ = dataclasses.replace(row_, tools={**row_.tools, "floor": floor})
        print(
            header(
                row_.title,
                f"server on cpu {server_cpu} (GOMAXPROCS=1), generators on cpu {gen_cpu};"
                f" marginal of {args.long:g} s over {args.short:g} s runs,"
                f" {args.rounds} rounds, order alternating",
            ),
            flush=True,
        )
        run_row(row_, args.rounds, args.short, args.long, gen_cpu)


if __name__ == "__main__":
    main()
