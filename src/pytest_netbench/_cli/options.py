"""The ``netbench`` command line: subcommands, their options, and the option values read.

Options the user leaves out are not passed on, so the library's defaults (``_spec``) hold
for the CLI as for Python callers.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from pytest_netbench._cli.compare import add_compare_parser
from pytest_netbench._errors import SpecError
from pytest_netbench._spec import LOOPS

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_duration(text: str) -> float:
    """``10s``, ``500ms``, ``2m``, ``1.5`` (seconds)."""
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: use e.g. 10s, 500ms, 2m")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)]


def parse_size(text: str) -> int:
    """``512``, ``512k``, ``1m`` (binary units)."""
    match = _SIZE.match(text)
    if not match or int(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: use e.g. 512, 32k, 1m")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]


def parse_header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"header {text!r} must look like 'Name: value'")
    return name.strip(), value.strip()


def parse_fraction(text: str) -> float:
    """``0.05`` or ``5%``."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a fraction: use e.g. 0.05 or 5%"
        ) from None
    return value


def _add_http_options(parser: argparse.ArgumentParser, *, pipelining: bool) -> None:
    parser.add_argument("url", help="http:// or https:// URL on loopback")
    parser.add_argument("-m", "--method", default="GET")
    parser.add_argument("-H", "--header", type=parse_header, action="append", default=[])
    parser.add_argument("--body", default="", help="request body (text), or @FILE")
    parser.add_argument("--no-keepalive", action="store_true", help="new connection per request")
    parser.add_argument("--rpc", type=int, help="requests per connection, then close")
    if pipelining:
        parser.add_argument("--pipeline", type=int, help="requests in flight per conn (1)")
    parser.add_argument("--insecure", action="store_true", help="don't verify TLS certificates")
    parser.add_argument("--proxy", help="send through this HTTP proxy (host:port)")


def _add_load_options(
    parser: argparse.ArgumentParser, *, fixed_rate: bool, per: str = "run"
) -> argparse._ArgumentGroup:
    group = parser.add_argument_group("load")
    group.add_argument("-c", "--connections", type=int, help="connections (10)")
    stop = group.add_mutually_exclusive_group()
    stop.add_argument(
        "-d", "--duration", type=parse_duration, help=f"time per {per}, e.g. 5s (10s)"
    )
    stop.add_argument("-n", "--requests", type=int, help=f"requests per {per}, then stop")
    if fixed_rate:
        group.add_argument("--rate", type=float, help="open loop: fixed arrival rate (req/s)")
    group.add_argument("--arrival", choices=("uniform", "poisson"), help="(uniform)")
    group.add_argument("--max-connections", type=int, help="open loop: pool bound (1024)")
    group.add_argument("--warmup", type=parse_duration, help=f"excluded time per {per} (0s)")
    group.add_argument("--timeout", type=parse_duration, help="per request (10s)")
    group.add_argument("--connect-timeout", type=parse_duration, help="(5s)")
    group.add_argument("--workers", type=int, help="generator processes (1)")
    group.add_argument(
        "--connect-first",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="closed loop: open every connection before the window (echo: on; http: off)",
    )
    group.add_argument(
        "--connect-rate", type=float, metavar="N", help="with --connect-first: N connects/s at most"
    )
    group.add_argument(
        "--probe-every",
        type=parse_duration,
        metavar="T",
        help="one more client connects, makes one exchange and leaves every T (e.g. 100ms)",
    )
    group.add_argument("--loop", choices=LOOPS, help="(auto: uvloop if installed)")
    group.add_argument("--allow-remote", action="store_true", help="allow non-loopback targets")
    return group


def _add_cluster_option(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the --workers shares on this Dask scheduler's workers, one each"
        " (tcp://host:8786; needs pytest-netbench[distributed])",
    )


def _add_output_options(
    parser: argparse.ArgumentParser, what: str, *, pictures: bool = False
) -> None:
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, metavar="PATH", help=f"write {what} here")
    if pictures:
        out.add_argument(
            "--plot",
            type=Path,
            metavar="DIR",
            help="draw PNG pictures of the result into DIR (needs matplotlib; docs/plots.md)",
        )
        out.add_argument(
            "--html",
            type=Path,
            metavar="PATH",
            help="write one self-contained HTML report here (docs/html-report.md)",
        )
    out.add_argument("--quiet", action="store_true", help="no text report")
    out.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="live progress on stderr (default: when stderr is a terminal)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netbench",
        description="Drive HTTP/1.1 or raw TCP load at a server on this machine and report"
        " exact latency percentiles, errors by kind and the generator's own health.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    http = sub.add_parser("http", help="HTTP/1.1 load", description="HTTP/1.1 load at URL")
    _add_http_options(http, pipelining=True)
    _add_cluster_option(_add_load_options(http, fixed_rate=True))
    _add_output_options(http, "LoadResult.to_dict()", pictures=True)
    http.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")

    echo = sub.add_parser("echo", help="raw TCP echo load", description="TCP echo load")
    echo.add_argument("target", metavar="HOST:PORT")
    echo.add_argument("--bytes", type=parse_size, default=512, help="payload per exchange")
    echo.add_argument("--chunk", type=parse_size, default=None, help="write size")
    echo.add_argument(
        "--framing",
        default="echo",
        help="echo (verify bytes), fixed:N, line, length-prefixed:N",
    )
    _add_cluster_option(_add_load_options(echo, fixed_rate=True))
    _add_output_options(echo, "LoadResult.to_dict()", pictures=True)
    echo.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")

    _add_sweep(sub)
    _add_capacity(sub)
    _add_cold_start(sub)

    _add_crosscheck(sub)
    add_compare_parser(sub)

    servers = sub.add_parser("servers", help="list the catalog of reference servers")
    servers.add_argument("--app", choices=("hello", "echo"), default=None)
    return parser


def _add_sweep(sub: Any) -> None:
    sweep = sub.add_parser(
        "sweep",
        help="open-loop load at a series of rates, one table row per rate",
        description="One open-loop load per rate, each printed as a row as it finishes"
        " (demanded and achieved rate, latency corrected and uncorrected, errors).",
    )
    _add_http_options(sweep, pipelining=False)
    group = sweep.add_argument_group("sweep")
    group.add_argument(
        "--rates",
        required=True,
        help="start:stop:step, the stop included (100:2000:100), or a list (100,500,1000)",
    )
    group.add_argument(
        "--stop-p99", type=float, metavar="MS", help="stop after a step whose p99 passes MS"
    )
    group.add_argument(
        "--stop-error-rate",
        type=parse_fraction,
        metavar="F",
        help="stop after a step with more errors per request than F (e.g. 0.05 or 5%%)",
    )
    group.add_argument("--retries", type=int, help="reruns of a step the generator spoiled (2)")
    _add_cluster_option(_add_load_options(sweep, fixed_rate=False, per="step"))
    _add_output_options(sweep, "SweepResult.to_dict()", pictures=True)
    sweep.add_argument("--fail-invalid", action="store_true", help="exit 5 if a step is invalid")


def _add_capacity(sub: Any) -> None:
    capacity = sub.add_parser(
        "capacity",
        help="the highest open-loop rate that meets an SLO",
        description="Search for the highest open-loop rate at which the server meets the SLO"
        " (bracketing, then bisecting), printing each step as it goes.",
    )
    _add_http_options(capacity, pipelining=False)
    group = capacity.add_argument_group("search")
    group.add_argument(
        "--slo",
        default="p99_ms < 50",
        help="terms joined by 'and': <metric> <op> <number> ('p99_ms < 50')",
    )
    group.add_argument(
        "--max-error-rate",
        type=parse_fraction,
        default=0.001,
        metavar="F",
        help="errors per request allowed at a passing rate (0.001)",
    )
    group.add_argument(
        "--precision",
        type=parse_fraction,
        default=0.05,
        metavar="F",
        help="how close the bounds must come (0.05 = 5%%)",
    )
    group.add_argument(
        "--start-rate", type=float, help="first rate tried (3/4 of a closed-loop run)"
    )
    group.add_argument("--min-rate", type=float, help="never try below this rate (1)")
    group.add_argument("--max-rate", type=float, help="never try above this rate")
    group.add_argument("--max-steps", type=int, help="a budget of steps (30)")
    group.add_argument("--retries", type=int, help="reruns of a step the generator spoiled (2)")
    _add_cluster_option(_add_load_options(capacity, fixed_rate=False, per="step"))
    _add_output_options(capacity, "CapacityResult.to_dict()", pictures=True)


def _add_cold_start(sub: Any) -> None:
    cold = sub.add_parser(
        "cold-start",
        help="one closed-loop run from the very first request, read at 100 ms",
        description="One closed-loop run from the server's very first request, with no"
        " warm-up, its timeline printed a row per --resolution: how a JIT or a cache warms"
        " up. Start the server fresh before each run.",
    )
    _add_http_options(cold, pipelining=True)
    group = cold.add_argument_group("cold start")
    group.add_argument(
        "--resolution", type=parse_duration, help="one timeline row per this long (100ms)"
    )
    group.add_argument(
        "--settle-tolerance",
        type=parse_fraction,
        metavar="F",
        help="settled: req/s within F of the steady rate to the end (0.1 = 10%%)",
    )
    group.add_argument(
        "--settle-window",
        type=parse_duration,
        help="settling is judged over windows this long (1s, or a quarter of a shorter run)",
    )
    group.add_argument("--retries", type=int, help="reruns of a spoiled run (0: it warms up)")
    load = cold.add_argument_group("load")
    load.add_argument("-c", "--connections", type=int, help="connections (10)")
    load.add_argument("-d", "--duration", type=parse_duration, help="run time, e.g. 10s (10s)")
    load.add_argument("--timeout", type=parse_duration, help="per request (10s)")
    load.add_argument("--connect-timeout", type=parse_duration, help="(5s)")
    load.add_argument("--workers", type=int, help="generator processes (1)")
    load.add_argument("--loop", choices=LOOPS, help="(auto: uvloop if installed)")
    load.add_argument("--allow-remote", action="store_true", help="allow non-loopback targets")
    _add_cluster_option(load)
    _add_output_options(cold, "ColdStartResult.to_dict()", pictures=True)
    cold.add_argument("--fail-invalid", action="store_true", help="exit 5 if it is invalid")


def _add_crosscheck(sub: Any) -> None:
    cross = sub.add_parser(
        "crosscheck",
        help="the same load measured by netbench and by wrk or ab, side by side",
        description="Run one closed-loop load with netbench, then the same load with wrk or"
        " ab (when installed), and print req/s, p50, p90, p99 and errors of both with their"
        " ratio (netbench / the other tool).",
    )
    cross.add_argument("url", help="http:// URL on loopback")
    cross.add_argument("--tool", choices=("wrk", "ab"), default="wrk", help="the second tool (wrk)")
    cross.add_argument("-H", "--header", type=parse_header, action="append", default=[])
    cross.add_argument(
        "--no-keepalive", action="store_true", help="new connection per request (ab only)"
    )
    load = cross.add_argument_group("load")
    load.add_argument("-c", "--connections", type=int, help="connections (10)")
    stop = load.add_mutually_exclusive_group()
    stop.add_argument(
        "-d", "--duration", type=parse_duration, help="wrk: whole seconds, e.g. 10s (10s)"
    )
    stop.add_argument("-n", "--requests", type=int, help="ab: requests to send (required)")
    load.add_argument("--timeout", type=parse_duration, help="per request (10s)")
    load.add_argument("--workers", type=int, help="netbench processes, and as many wrk threads (1)")
    load.add_argument("--loop", choices=LOOPS, help="netbench's loop (auto: uvloop if installed)")
    load.add_argument("--retries", type=int, help="reruns of a spoiled netbench run (2)")
    load.add_argument("--allow-remote", action="store_true", help="allow non-loopback targets")
    out = cross.add_argument_group("output")
    out.add_argument(
        "--json", type=Path, metavar="PATH", help="write CrosscheckResult.to_dict() here"
    )
    out.add_argument("--quiet", action="store_true", help="no text report")


def given(**options: Any) -> dict[str, Any]:
    """The options the user set: the rest take the library's defaults (``_spec``)."""
    return {name: value for name, value in options.items() if value is not None}


def load_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The load options every subcommand that drives load has."""
    return given(
        connections=args.connections,
        duration=args.duration,
        requests=getattr(args, "requests", None),
        rate=getattr(args, "rate", None),
        arrival=getattr(args, "arrival", None),
        max_connections=getattr(args, "max_connections", None),
        warmup=getattr(args, "warmup", None),
        timeout=args.timeout,
        connect_timeout=args.connect_timeout,
        workers=args.workers,
        loop=args.loop,
        allow_remote=args.allow_remote,
        connect_first=getattr(args, "connect_first", None),
        connect_rate=getattr(args, "connect_rate", None),
        probe_every=getattr(args, "probe_every", None),
    )


def http_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``http_spec``'s arguments from an HTTP subcommand's options (the URL aside)."""
    body: bytes = args.body.encode()
    if args.body.startswith("@"):
        try:
            body = Path(args.body[1:]).read_bytes()
        except OSError as exc:
            raise SpecError(f"cannot read the body file {args.body[1:]!r}: {exc}") from None
    return {
        "method": args.method,
        "headers": args.header,
        "body": body,
        "keepalive": not args.no_keepalive,
        "verify_tls": not args.insecure,
        "proxy": args.proxy,
        **given(
            requests_per_connection=args.rpc,
            pipeline=getattr(args, "pipeline", None),
        ),
        **load_kwargs(args),
    }
