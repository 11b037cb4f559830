"""Build and run the benchmark's own servers, pinned to one core.

The C server (``httpd.c``, every mode) and the Go net/http one (``hello_go/``, hello and vary)
are built once into a cache directory outside the work tree (``$NETBENCH_BENCH_BUILD`` or
``/tmp/netbench-bench-build``) and rebuilt only when their source changes.
:class:`PinnedServer` starts one under ``taskset``, reads the port it prints, and always
kills it on exit, so no benchmark leaves a server behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import TracebackType

HERE = Path(__file__).resolve().parent
BUILD_DIR = Path(os.environ.get("NETBENCH_BENCH_BUILD", "/tmp/netbench-bench-build"))
_LISTENING = re.compile(rb"NETBENCH_LISTENING port=(\d+)")

SERVER_CPU = 0
GENERATOR_CPU = 1


def need_tool(name: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        sys.exit(f"benchmark needs `{name}` on PATH: {hint}")
    return path


def cpus_for_pinning() -> tuple[int, int]:
    """(server core, generator core); both must be usable by this process."""
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        sys.exit("benchmark needs two usable CPU cores to pin server and generator apart")
    return usable[0], usable[1]


def build_httpd() -> Path:
    """Compile ``httpd.c`` (cached by source hash) and return the binary's path."""
    gcc = need_tool("gcc", "apt-get install gcc")
    source = HERE / "httpd.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    binary = BUILD_DIR / f"httpd-{digest}"
    if not binary.exists():
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".tmp")
        done = subprocess.run(
            [gcc, "-O2", "-Wall", "-o", str(partial), str(source)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            sys.exit(f"building {source} failed:\n{done.stderr}")
        partial.rename(binary)
    return binary


def _build_go(name: str, sources: list[Path]) -> Path:
    """``go build`` the files (standard library only, so no network), cached by content."""
    go = need_tool("go", "install Go from https://go.dev/dl/")
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in sources)).hexdigest()[:12]
    binary = BUILD_DIR / f"{name}-{digest}"
    if not binary.exists():
        work = BUILD_DIR / f"{name}-{digest}-src"
        work.mkdir(parents=True, exist_ok=True)
        for source in sources:
            shutil.copy(source, work / source.name)
        (work / "go.mod").write_text(f"module {name}\n\ngo 1.21\n")
        partial = binary.with_suffix(".tmp")
        done = subprocess.run(
            [go, "build", "-o", str(partial), "."], cwd=work, capture_output=True, text=True
        )
        if done.returncode != 0:
            sys.exit(f"building {name} failed:\n{done.stderr}")
        partial.rename(binary)
    return binary


def build_go_hello() -> Path:
    """Go net/http hello (``hello_go/``), for ``bench_vs_wrk.py --server go``."""
    return _build_go("hello_go", [HERE / "hello_go" / "main.go"])


def build_go_flood() -> Path:
    """The minimal Go echo flood client (``flood_go/``), the yardstick of bench_echo_flood."""
    return _build_go("flood_go", [HERE / "flood_go" / "main.go"])


def build_go_echo() -> Path:
    """The catalog's Go server (``go`` in ``netbench servers``: its echo is a read/write loop)."""
    source = HERE.parent.parent / "src" / "pytest_netbench" / "_servers" / "apps" / "go"
    return _build_go("catalog_go", [source / "main.go"])


def build_go_sse_client() -> Path:
    """The minimal Go SSE client (``sse_go/``), the yardstick of bench_sse."""
    return _build_go("sse_go", [HERE / "sse_go" / "client.go"])


def build_go_h2() -> Path:
    """The catalog's Go HTTP/2 server (``apps/go_h2``), built as the catalog builds it."""
    from pytest_netbench._servers import build, catalog

    return build.ensure_built(catalog.GO_H2).artifact


class PinnedServer:
    """A benchmark server in one mode, pinned to ``cpu``; use as a context manager.

    ``server="c"`` is ``httpd.c`` (hello, delay, stall); ``server="go"`` is net/http with
    GOMAXPROCS=1 (hello, or vary: every response a different id and length);
    ``server="go-echo"`` is the catalog's Go echo (read/write per connection, GOMAXPROCS=1);
    ``server="go-h2c"`` the catalog's Go HTTP/2 server over h2c (hello's "/", GOMAXPROCS=1);
    ``server="go-catalog"`` the catalog's Go hello app (its ``/sse`` streams with set
    timings, GOMAXPROCS=1).
    """

    def __init__(
        self, mode: str = "hello", *, cpu: int | None = None, server: str = "c", **options: float
    ) -> None:
        if server == "go-echo":
            self.command = [str(build_go_echo()), "echo", "127.0.0.1", "0"]
        elif server == "go-catalog":  # the catalog's hello app: /sse streams with set timings
            self.command = [str(build_go_echo()), "hello", "127.0.0.1", "0"]
        elif server == "go-h2c":
            self.command = [str(build_go_h2()), "h2c", "127.0.0.1", "0"]
        elif server not in ("c", "go") or (server == "go" and mode not in ("hello", "vary")):
            sys.exit(
                f"no {server!r} server in mode {mode!r}: use server c, or go with hello or vary"
            )
        else:
            binary = build_httpd() if server == "c" else build_go_hello()
            self.command = [str(binary), "--mode", mode, "--host", "127.0.0.1", "--port", "0"]
        for key, value in options.items():
            self.command += [f"--{key.replace('_', '-')}", str(value)]
        self.cpu = cpus_for_pinning()[0] if cpu is None else cpu
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> PinnedServer:
        taskset = need_tool("taskset", "apt-get install util-linux")
        self.proc = subprocess.Popen(
            [taskset, "-c", str(self.cpu), *self.command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "GOMAXPROCS": "1"},  # one core for the Go runtime too
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the server prints this line once it listens
        found = _LISTENING.search(line)
        if found is None:
            self.stop()
            err = self.proc.stderr.read().decode() if self.proc.stderr else ""
            sys.exit(f"benchmark server did not start: {line!r} {err}")
        self.port = int(found.group(1))
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> PinnedServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
