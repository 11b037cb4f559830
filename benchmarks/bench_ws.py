"""WebSocket echo: `netbench ws` against a minimal Go client (gorilla/websocket), on one Go
WebSocket echo server.

The server (``servers/ws_go``, gorilla/websocket, GOMAXPROCS=1) is pinned to one core; each
generator runs alone, pinned to the other. Both open their connections (handshakes
included) before the window, send a small text message on each connection, await its echo
and check it, closed loop. Each trial runs the Go client and netbench back to back (order
alternating) at each connection count and prints the ratio of checked echoes per second
measured in that trial (the issue's goal: at least 0.8, aim 1.0).

    python benchmarks/bench_ws.py [--trials 3] [--duration 5] [--connections 100,1000]
                                  [--message-bytes 64]

``servers/ws_go`` is built here on first use (``go build``, which downloads
gorilla/websocket through the Go module proxy once, checked against its go.sum).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from figures import header, row
from launch import BUILD_DIR, HERE, cpus_for_pinning, need_tool
from measured import run_measured

_WS = re.compile(r"WS messages=(\d+) verify_errors=(\d+) io_errors=(\d+) seconds=([\d.]+)")
_LISTENING = re.compile(rb"NETBENCH_LISTENING port=(\d+)")
_NETBENCH = Path(sys.executable).with_name("netbench")


def build_ws_go() -> Path:
    """``servers/ws_go`` built once per content (its go.mod names gorilla/websocket)."""
    go = need_tool("go", "install Go from https://go.dev/dl/")
    source = HERE / "ws_go"
    files = sorted(p for p in source.iterdir() if p.is_file())
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()[:12]
    binary = BUILD_DIR / f"ws_go-{digest}"
    if not binary.exists():
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".tmp")
        done = subprocess.run(
            [go, "build", "-o", str(partial), "."],
            cwd=source,
            capture_output=True,
            text=True,
            env={**os.environ, "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"},
        )
        if done.returncode != 0:
            sys.exit(f"building ws_go failed:\n{done.stderr}")
        partial.rename(binary)
    return binary


class GoServer:
    """The gorilla echo server pinned to ``cpu`` with GOMAXPROCS=1; a context manager."""

    def __init__(self, cpu: int) -> None:
        taskset = need_tool("taskset", "Debian: apt-get install util-linux")
        self.process = subprocess.Popen(
            [taskset, "-c", str(cpu), str(build_ws_go()), "server", "127.0.0.1", "0"],
            stdout=subprocess.PIPE,
            env={**os.environ, "GOMAXPROCS": "1"},
        )
        assert self.process.stdout is not None
        found = _LISTENING.search(self.process.stdout.readline())
        if found is None:
            self.process.kill()
            sys.exit("the Go WebSocket server did not start")
        self.url = f"ws://127.0.0.1:{int(found.group(1))}/"

    def __enter__(self) -> GoServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(10)


def go_client(url: str, cpu: int, connections: int, size: int, seconds: float) -> float:
    """Checked echoes per second of the Go client; exits on any error it counted."""
    argv = ["taskset", "-c", str(cpu), str(build_ws_go()), "client", url]
    argv += [str(connections), str(size), str(seconds)]
    done = run_measured(argv, timeout_s=seconds + 60)
    found = _WS.search(done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"Go WebSocket client failed (exit {done.returncode}): {done.stderr[-2000:]}")
    messages, verify, io_errors, elapsed = found.groups()
    if int(verify) or int(io_errors):
        sys.exit(f"Go WebSocket client saw errors: {done.stdout.strip()}")
    return int(messages) / float(elapsed)


def netbench_client(
    url: str, cpu: int, connections: int, size: int, seconds: float
) -> tuple[float, float]:
    """(checked echoes per second, the worker's CPU share) of ``netbench ws`` pinned to cpu."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "r.json"
        argv = ["taskset", "-c", str(cpu), str(_NETBENCH), "ws", url, "-c", str(connections)]
        argv += ["-d", str(seconds), "--message-bytes", str(size), "--connect-first"]
        argv += ["--quiet", "--json", str(out)]
        done = run_measured(argv, timeout_s=seconds + 60)
        if done.returncode != 0 or not out.exists():
            sys.exit(f"netbench ws failed (exit {done.returncode}): {done.stderr[-2000:]}")
        r = json.loads(out.read_text())
    if r["errors_total"]:
        sys.exit(f"netbench ws had errors: {r['errors']}")
    return r["rps"], r["generator"]["cpu_percent"] / 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument("--connections", default="100,1000", help="comma-separated counts")
    parser.add_argument("--message-bytes", type=int, default=64, help="text message size")
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        sys.exit("taskset is needed (Debian: apt-get install util-linux)")
    counts = [int(c) for c in args.connections.split(",")]
    server_cpu, gen_cpu = cpus_for_pinning()
    print(
        header(
            f"netbench ws vs a Go client (gorilla/websocket), {args.message_bytes}-byte text"
            " messages, every echo checked",
            f"Go WebSocket echo server (GOMAXPROCS=1) on cpu {server_cpu}, generator on cpu"
            f" {gen_cpu}, {args.duration:g} s per run, {args.trials} trials",
        )
    )
    ratios: dict[int, list[float]] = {c: [] for c in counts}
    go_rates: dict[int, list[float]] = {c: [] for c in counts}
    nb_rates: dict[int, list[float]] = {c: [] for c in counts}
    with GoServer(server_cpu) as server:
        for trial in range(args.trials):
            for count in counts:
                load = (server.url, gen_cpu, count, args.message_bytes, args.duration)
                if trial % 2 == 0:
                    go = go_client(*load)
                    nb, share = netbench_client(*load)
                else:
                    nb, share = netbench_client(*load)
                    go = go_client(*load)
                ratios[count].append(nb / go)
                go_rates[count].append(go)
                nb_rates[count].append(nb)
                print(
                    f"  trial {trial + 1}, {count:,} connections: Go {go:,.0f}/s | netbench "
                    f"{nb:,.0f}/s (worker cpu {share:.0%}) -> x{nb / go:.3f}"
                )
    for count in counts:
        print(row(f"{count:,} connections: Go client", go_rates[count], "echoes/s"))
        print(row(f"{count:,} connections: netbench", nb_rates[count], "echoes/s"))
        print(row(f"{count:,} connections: netbench / Go", ratios[count], "x   (goal >= 0.8)"))


if __name__ == "__main__":
    main()
