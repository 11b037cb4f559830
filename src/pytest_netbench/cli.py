"""The ``netbench`` command: ``http``, ``echo`` and ``servers``, in the spirit of wrk and ab.

Exit status: 0 when the load ran (whatever the server answered), 2 for bad arguments,
3 when the target could not be reached at all, 4 for other refusals (remote target, fd
limit), 5 when ``--fail-invalid`` is given and the result is invalid.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_netbench._errors import (
    NetbenchError,
    SpecError,
    TargetUnreachableError,
)
from pytest_netbench._model import LoadResult

EXIT_BAD_ARGS = 2
EXIT_UNREACHABLE = 3
EXIT_REFUSED = 4
EXIT_INVALID = 5

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


def _add_load_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("load")
    group.add_argument("-c", "--connections", type=int, default=10, help="connections (10)")
    stop = group.add_mutually_exclusive_group()
    stop.add_argument("-d", "--duration", type=parse_duration, help="run time, e.g. 10s")
    stop.add_argument("-n", "--requests", type=int, help="total requests, then stop")
    group.add_argument("--rate", type=float, help="open loop: fixed arrival rate (req/s)")
    group.add_argument("--arrival", choices=("uniform", "poisson"), default="uniform")
    group.add_argument("--max-connections", type=int, help="open loop: pool bound (1024)")
    group.add_argument("--warmup", type=parse_duration, default=0.0, help="excluded time")
    group.add_argument("--timeout", type=parse_duration, default=10.0, help="per request")
    group.add_argument("--connect-timeout", type=parse_duration, default=5.0)
    group.add_argument("--workers", type=int, default=1, help="generator processes")
    group.add_argument("--loop", choices=("auto", "uvloop", "asyncio", "trio"), default="auto")
    group.add_argument("--allow-remote", action="store_true", help="allow non-loopback targets")
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, metavar="PATH", help="write LoadResult.to_dict() here")
    out.add_argument("--quiet", action="store_true", help="no text report")
    out.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netbench",
        description="Drive HTTP/1.1 or raw TCP load at a server on this machine and report"
        " exact latency percentiles, errors by kind and the generator's own health.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    http = sub.add_parser("http", help="HTTP/1.1 load", description="HTTP/1.1 load at URL")
    http.add_argument("url", help="http:// or https:// URL on loopback")
    http.add_argument("-m", "--method", default="GET")
    http.add_argument("-H", "--header", type=parse_header, action="append", default=[])
    http.add_argument("--body", default="", help="request body (text), or @FILE")
    http.add_argument("--no-keepalive", action="store_true", help="new connection per request")
    http.add_argument("--rpc", type=int, default=0, help="requests per connection, then close")
    http.add_argument("--pipeline", type=int, default=1, help="requests in flight per conn")
    http.add_argument("--insecure", action="store_true", help="don't verify TLS certificates")
    http.add_argument("--proxy", help="send through this HTTP proxy (host:port)")
    _add_load_options(http)

    echo = sub.add_parser("echo", help="raw TCP echo load", description="TCP echo load")
    echo.add_argument("target", metavar="HOST:PORT")
    echo.add_argument("--bytes", type=parse_size, default=512, help="payload per exchange")
    echo.add_argument("--chunk", type=parse_size, default=None, help="write size")
    echo.add_argument(
        "--framing",
        default="echo",
        help="echo (verify bytes), fixed:N, line, length-prefixed:N",
    )
    _add_load_options(echo)

    servers = sub.add_parser("servers", help="list the catalog of reference servers")
    servers.add_argument("--app", choices=("hello", "echo"), default=None)
    return parser


def _common_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "connections": args.connections,
        "duration": args.duration,
        "requests": args.requests,
        "rate": args.rate,
        "arrival": args.arrival,
        "max_connections": args.max_connections,
        "warmup": args.warmup,
        "timeout": args.timeout,
        "connect_timeout": args.connect_timeout,
        "workers": args.workers,
        "loop": args.loop,
        "allow_remote": args.allow_remote,
    }


def _run_http(args: argparse.Namespace) -> LoadResult:
    from pytest_netbench._api import http_load

    body: bytes = args.body.encode()
    if args.body.startswith("@"):
        try:
            body = Path(args.body[1:]).read_bytes()
        except OSError as exc:
            raise SpecError(f"cannot read the body file {args.body[1:]!r}: {exc}") from None
    return http_load(
        args.url,
        method=args.method,
        headers=args.header,
        body=body,
        keepalive=not args.no_keepalive,
        requests_per_connection=args.rpc,
        pipeline=args.pipeline,
        verify_tls=not args.insecure,
        proxy=args.proxy,
        **_common_kwargs(args),
    )


def _run_echo(args: argparse.Namespace) -> LoadResult:
    from pytest_netbench._api import echo_load
    from pytest_netbench._engine.target import parse_host_port

    host, port = parse_host_port(args.target)
    return echo_load(
        host,
        port,
        payload_bytes=args.bytes,
        chunk=args.chunk,
        framing=args.framing,
        **_common_kwargs(args),
    )


def _list_servers(args: argparse.Namespace) -> int:
    from pytest_netbench._servers.catalog import listing

    print(listing(app=args.app))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "servers":
        return _list_servers(args)
    try:
        result = _run_http(args) if args.command == "http" else _run_echo(args)
    except SpecError as exc:
        parser.exit(EXIT_BAD_ARGS, f"netbench: error: {exc}\n")
    except TargetUnreachableError as exc:
        print(f"netbench: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except NetbenchError as exc:
        print(f"netbench: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        print("netbench: interrupted", file=sys.stderr)
        return 130
    if args.json is not None:
        args.json.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    if not args.quiet:
        from pytest_netbench._report.summary import format_result

        print(format_result(result))
    if args.fail_invalid and not result.valid:
        return EXIT_INVALID
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
