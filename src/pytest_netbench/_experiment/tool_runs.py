"""Running wrk, ab or h2load as a subprocess for the load a :class:`LoadSpec` describes.

Each tool gets the spec's connections, its duration (wrk, h2load) or request count (ab,
h2load), its keep-alive choice, headers and request timeout (wrk, ab), and a thread per
netbench worker (wrk, h2load; ab has one); h2load gets the spec's HTTP/2 streams per
connection (``-m``). What a tool cannot do the same way is refused with a :class:`SpecError`
before anything runs, so the two measurements are of one load. The target passes the
same loopback guard as every netbench load.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_netbench._errors import SpecError, ToolFailed, ToolNotInstalled
from pytest_netbench._experiment.tool_output import (
    ToolFigures,
    parse_ab,
    parse_h2load,
    parse_wrk,
)
from pytest_netbench._host.cpus import pinned_thread
from pytest_netbench._input.target import guard_target
from pytest_netbench._model import LoadSpec


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    package: str  # the Debian package that installs it
    homepage: str


TOOLS = {
    "wrk": Tool("wrk", "wrk", "https://github.com/wg/wrk"),
    "ab": Tool("ab", "apache2-utils", "https://httpd.apache.org/docs/current/programs/ab.html"),
    "h2load": Tool("h2load", "nghttp2-client", "https://nghttp2.org/documentation/h2load.1.html"),
}
_AB_STALLED = (
    "; ab sends HTTP/1.0 requests, and waits for the server to close the connection unless"
    " the response says 'Connection: keep-alive': a server that keeps an HTTP/1.0"
    " connection open without saying so stalls ab until its timeout"
)
# Beyond its load, a tool gets this long to start, connect and print before it is killed.
_GRACE_S = 30.0


def require(tool: str) -> str:
    """The path of ``tool`` on PATH, or :class:`ToolNotInstalled` naming its package."""
    known = TOOLS.get(tool)
    if known is None:
        raise SpecError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}")
    path = shutil.which(known.name)
    if path is None:
        raise ToolNotInstalled(
            f"{known.name} is not installed (not on PATH): on Debian or Ubuntu, "
            f"apt-get install {known.package} (in this repository, bash scripts/bootstrap.sh "
            f"installs it); elsewhere see {known.homepage}"
        )
    return path


def check_comparable(tool: str, spec: LoadSpec) -> None:
    """Refuse a load ``tool`` cannot run as netbench does, saying what to change."""
    if spec.kind != "http":
        raise SpecError(f"a crosscheck drives HTTP; {tool} does not do raw TCP")
    if spec.rate is not None:
        raise SpecError(
            f"{tool} runs a closed loop (fixed connections): drop rate for a crosscheck"
        )
    if spec.stages:
        raise SpecError(f"{tool} holds its connections fixed: drop stages for a crosscheck")
    if spec.method.upper() != "GET" or spec.body or spec.mix:
        raise SpecError("a crosscheck sends plain GET requests: drop method, body and mix")
    if spec.checks:
        raise SpecError(
            f"{tool} checks no answer, and netbench counts an answer failing a check as an"
            " error: drop checks for a crosscheck"
        )
    if spec.feeders:
        raise SpecError(
            f"a crosscheck sends one fixed request, as {tool} does: drop feeders (and the"
            " ${...} placeholders), or compare templated loads with netbench alone"
        )
    if tool == "h2load":
        _check_h2load(spec)
        return
    if spec.protocol != "http1":
        raise SpecError(
            f"{tool} speaks HTTP/1.1 only: drop protocol={spec.protocol!r} (and streams) for a"
            " crosscheck, or crosscheck an HTTP/2 load with tool='h2load'"
        )
    if spec.pipeline != 1 or spec.requests_per_connection or spec.proxy is not None:
        raise SpecError("a crosscheck takes no pipeline, requests_per_connection or proxy")
    if tool == "wrk":
        if not spec.keepalive:
            raise SpecError("wrk always keeps connections alive: use tool='ab' for keepalive=False")
        if spec.requests is not None:
            raise SpecError("wrk runs for a duration: use duration= (whole seconds), not requests")
        duration = spec.duration_s
        if duration is None or duration < 1 or duration != int(duration):
            raise SpecError(f"wrk takes whole seconds: duration must be 1, 2, ... (got {duration})")
        if spec.workers > spec.connections:
            raise SpecError("wrk needs at least one connection per thread (worker)")
    if tool == "ab":
        if spec.requests is None:
            raise SpecError("ab sends a number of requests: pass requests= (e.g. 10000)")
        if spec.requests < spec.connections:
            raise SpecError("ab needs at least as many requests as connections")
        if spec.workers != 1:
            raise SpecError("ab runs in one thread: use workers=1 to compare it")


def _check_h2load(spec: LoadSpec) -> None:
    if spec.protocol != "h2":
        raise SpecError(
            "h2load is the HTTP/2 crosscheck: pass protocol='h2' (CLI: --protocol h2), or use"
            " tool='wrk' or 'ab' for an HTTP/1.1 load"
        )
    if spec.requests is None:
        duration = spec.duration_s
        if duration is None or duration < 1 or duration != int(duration):
            raise SpecError(
                f"h2load takes whole seconds: duration must be 1, 2, ... (got {duration})"
            )
    elif spec.requests < spec.connections:
        raise SpecError("h2load needs at least as many requests as connections")
    if spec.workers > spec.connections:
        raise SpecError("h2load needs at least one connection per thread (worker)")


def fitted(tool: str, spec: LoadSpec) -> LoadSpec:
    """A scaled load (``--netbench-scale``) as ``tool`` can run it: wrk takes whole seconds,
    ab at least one request per connection."""
    if tool in ("wrk", "h2load") and spec.requests is None and spec.duration_s is not None:
        return dataclasses.replace(spec, duration_s=float(max(1, round(spec.duration_s))))
    if tool == "ab" and spec.requests is not None:
        return dataclasses.replace(spec, requests=max(spec.requests, spec.connections))
    return spec


def wrk_command(path: str, spec: LoadSpec) -> list[str]:
    assert spec.duration_s is not None
    command = [
        path,
        "--latency",
        "-t",
        str(spec.workers),
        "-c",
        str(spec.connections),
        "-d",
        f"{int(spec.duration_s)}s",
        "--timeout",
        f"{max(1, math.ceil(spec.timeout_s))}s",
    ]
    for name, value in spec.headers:
        command += ["-H", f"{name}: {value}"]
    return [*command, spec.url]


def h2load_command(path: str, spec: LoadSpec) -> list[str]:
    """``h2load -c C -m STREAMS -t WORKERS`` for ``-D`` whole seconds or ``-n`` requests
    (cleartext h2c by prior knowledge on http://, ALPN h2 over TLS on https://)."""
    command = [path, "-c", str(spec.connections), "-m", str(spec.streams)]
    command += ["-t", str(spec.workers)]
    if spec.requests is not None:
        command += ["-n", str(spec.requests)]
    else:
        assert spec.duration_s is not None
        command += ["-D", str(int(spec.duration_s))]
    for name, value in spec.headers:
        command += ["-H", f"{name}: {value}"]
    return [*command, spec.url]


def ab_command(path: str, spec: LoadSpec, csv_path: str) -> list[str]:
    assert spec.requests is not None
    # -r: carry on after a socket error (ab stops at the first one otherwise); -q: no
    # progress lines; -e: the percentiles to 3 decimals.
    command = [path, "-q", "-r", "-n", str(spec.requests), "-c", str(spec.connections)]
    command += ["-s", str(max(1, math.ceil(spec.timeout_s))), "-e", csv_path]
    if spec.keepalive:
        command.append("-k")
    for name, value in spec.headers:
        command += ["-H", f"{name}: {value}"]
    return [*command, spec.url]


def run_tool(tool: str, spec: LoadSpec) -> ToolFigures:
    """Run ``tool`` for the load of ``spec`` and read what it printed."""
    guard_target(spec.host, allow_remote=spec.allow_remote)
    check_comparable(tool, spec)
    path = require(tool)
    version = tool_version(tool, path)
    with tempfile.TemporaryDirectory(prefix="netbench-crosscheck-") as scratch:
        # ab writes its CSV into the scratch directory, its working directory.
        csv_name = "percentiles.csv"
        if tool == "wrk":
            command = wrk_command(path, spec)
        elif tool == "h2load":
            command = h2load_command(path, spec)
        else:
            command = ab_command(path, spec, csv_name)
        limit = (spec.duration_s or 0.0) + _GRACE_S
        if spec.requests is not None:
            limit += spec.requests * spec.timeout_s / max(1, spec.connections)
        try:
            # The tool runs on the load's cpus, as netbench's side does: a child takes the
            # affinity of the thread that starts it.
            with pinned_thread(spec.cpus):
                done = subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=limit,
                    check=False,
                    cwd=scratch,
                )
        except subprocess.TimeoutExpired:
            raise ToolFailed(f"{tool} did not finish within {limit:.0f} s: {command}") from None
        out = done.stdout.decode(errors="replace")
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip()[-800:]
            raise ToolFailed(
                f"{tool} exited with code {done.returncode}: {err or out[-800:] or 'no output'}"
                + (_AB_STALLED if tool == "ab" and "apr_pollset_poll" in err else "")
            )
        if tool == "wrk":
            return parse_wrk(out, command=tuple(command), version=version)
        if tool == "h2load":
            return parse_h2load(out, command=tuple(command), version=version)
        csv_path = Path(scratch) / csv_name
        csv = csv_path.read_text() if csv_path.exists() else ""
        return parse_ab(out, csv=csv, command=tuple(command), version=version)


def tool_version(tool: str, path: str) -> str:
    """``wrk 4.1.0``, ``ab 2.3`` or ``h2load 1.52.0``, read from the tool's banner ("" if
    it has none)."""
    flag = "-V" if tool == "ab" else "--version"
    try:
        done = subprocess.run(
            [path, flag], stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    banner = (done.stdout + done.stderr).decode(errors="replace")
    number = re.search(r"Version (\S+)" if tool == "ab" else r"(\d+\.\d+(?:\.\d+)?)", banner)
    return f"{tool} {number.group(1)}" if number else ""
