"""The ``netbench`` command line: subcommands, their options, and the option values read.

Options the user leaves out are not passed on, so the library's defaults (``_input.spec``) hold
for the CLI as for Python callers.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_netbench._errors import SpecError
from pytest_netbench._input import durations
from pytest_netbench._input.flags import SHARED_BY_NAME, shared_help

# The option table and what its values are made of are imported by the subcommands that
# use them, not by ``netbench --help`` (tests/integration/test_cli_start.py).
if TYPE_CHECKING:
    from pytest_netbench._input.options import LoadKind, LoadOption
    from pytest_netbench._model.checks import Check
    from pytest_netbench._model.feeders import Feeder
    from pytest_netbench._model.stages import Stage

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_duration(text: str) -> float:
    """``10s``, ``1m30s``, ``500ms``, ``1.5`` (seconds): the one grammar of ``_input.durations``."""
    try:
        return durations.parse_duration(text)
    except SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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


# The subcommands' load flags, from the one option table (``_input.options.LOAD_OPTIONS``).
# Each step sets the rate and duration, and steps are open loop (no pipelining, no
# connections first, no ramp: a step holds one rate).
_SWEEP_SKIP = frozenset({"rate", "pipeline", "connect_first", "connect_rate", "stages"})
_COLD_SKIP = frozenset(
    {"requests", "rate", "arrival", "max_connections", "warmup", "timeline_resolution", "stages"}
)
# What wrk and ab can both be told, so the two tools run the same load.
_CROSSCHECK_ONLY = frozenset(
    {
        "cpus",
        "connections",
        "duration",
        "requests",
        "timeout",
        "workers",
        "loop",
        "allow_remote",
        "keepalive",
        "headers",
        # netbench's load before both tools' runs (crosscheck's doc).
        "warmup",
        # HTTP/2, for h2load (its -m is streams).
        "protocol",
        "streams",
        # netbench's TLS check: none of the tools checks a certificate.
        "verify_tls",
    }
)


def parse_feeder(text: str) -> tuple[str, Feeder]:
    """``id=count:1``, ``user=csv:users.csv:shuffle`` (see ``FEEDER_FLAG_HELP``)."""
    from pytest_netbench._input.feeder_text import feeder_from_flag

    try:
        return feeder_from_flag(text)
    except SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--feeder ")) from None


def parse_stage(text: str) -> Stage:
    """``30s:1000``: a stage of a ramp, k6's ``--stage`` form."""
    from pytest_netbench._input.stages import parse_stage_text

    try:
        return parse_stage_text(text)
    except SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_check_flag(text: str) -> Check:
    """``--check 'no error page: body !contains Error'``: one check (docs/checks.md)."""
    from pytest_netbench._model.checks import parse_check

    try:
        return parse_check(text)
    except SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_PARSERS = {
    "count": int,
    "seconds": parse_duration,
    "per_second": float,
    "size": parse_size,
    "headers": parse_header,
    "feeder": parse_feeder,
    "stages": parse_stage,
    "checks": parse_check_flag,
}
_METAVARS = {"count": "N", "seconds": "T", "per_second": "N", "size": "BYTES", "headers": "H"}
_MIX_FLAG_HELP = (
    "a request mix from FILE: vegeta's targets (GET http://host/path lines, header lines,"
    " @body-file), or .toml/.json with names, weights and feeders (docs/traffic.md); the"
    " URL names the server only"
)
# --feeder's (the flag's text, parsed by _input/feeder_text, imported when one is given).
FEEDER_FLAG_HELP = (
    "NAME=KIND[:ARG...]: a feeder for the ${NAME} placeholders, repeatable; KIND is count,"
    " randint, choice, uuid4, csv, jsonl or call, its ARGs the function's in order or"
    " as key=value (id=count:1, qty=randint:1:5, plan=choice:free,pro:3,1, rid=uuid4,"
    " user=csv:users.csv:shuffle, row=jsonl:rows.jsonl:on_end=stop,"
    " u=call:myapp.data:signups)"
)
# Options given once a flag, repeated (as curl's -H), collected into a list.
_REPEATED = frozenset({"headers", "feeder", "stages", "checks"})
_PER_STEP = frozenset({"duration", "requests", "warmup"})


def add_load_flags(
    parser: argparse.ArgumentParser,
    load: LoadKind,
    *,
    per: str = "run",
    skip: frozenset[str] = frozenset(),
    only: frozenset[str] | None = None,
) -> argparse._ArgumentGroup:
    """One flag per option of ``load`` in the table (less ``skip``, or just ``only``); every
    default is None, so the options left out take the library's defaults."""
    from pytest_netbench._input.options import options_of

    group = parser.add_argument_group("load")
    stop_after = group.add_mutually_exclusive_group()
    for option in options_of(load):
        if not option.on_cli or option.name in skip or (only and option.name not in only):
            continue
        target = stop_after if option.name in ("duration", "requests") else group
        add_option_flag(target, option, per)
    return group


def add_option_flag(
    group: argparse._ActionsContainer, option: LoadOption, per: str = "run"
) -> None:
    """The flag of one row of an option table; its default is None, so an option left out
    takes the library's default (the help shows it)."""
    names = [n for n in (option.short, option.cli_flag) if n]
    kwargs = _flag_kwargs(option, per)
    if option.required:
        kwargs["required"] = True
    group.add_argument(*names, dest=option.name, default=None, **kwargs)


def _flag_kwargs(option: LoadOption, per: str) -> dict[str, Any]:
    help_text = option.help
    if per != "run" and option.name in _PER_STEP:
        help_text += f" (each {per})"
    if option.default not in (None, "", b"") and option.takes != "switch":
        shown = f"{option.default:g}s" if option.takes == "seconds" else str(option.default)
        help_text += f" [{shown}]"
    help_text = help_text.replace("%", "%%")
    if option.takes == "switch":
        if option.default is None:
            return {"action": argparse.BooleanOptionalAction, "help": help_text}
        if option.default is True:
            return {"action": "store_false", "help": option.off_help.replace("%", "%%")}
        return {"action": "store_true", "help": help_text}
    kwargs: dict[str, Any] = {"help": help_text}
    if option.takes == "choice":
        kwargs["choices"] = option.choices
    else:
        kwargs["type"] = _PARSERS.get(option.takes, str)
        kwargs["metavar"] = option.metavar or _METAVARS.get(option.takes, option.name.upper())
    if option.takes in _REPEATED:
        kwargs["action"] = "append"
    if option.takes == "headers":
        kwargs["metavar"] = "'NAME: VALUE'"
    if option.takes == "feeder":
        kwargs["help"] = FEEDER_FLAG_HELP
    if option.takes == "mix_file":
        kwargs["help"] = _MIX_FLAG_HELP
    return kwargs


def _defaults_of(function: Callable[..., object]) -> dict[str, Any]:
    """An experiment's keyword defaults, as its signature gives them."""
    return {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


def _add_run_flags(group: argparse._ArgumentGroup, *, retries_default: str) -> None:
    """How a load is run, besides what it sends: reruns and where its shares run."""
    flag = SHARED_BY_NAME["retries"]
    group.add_argument(
        flag.cli_flag,
        type=int,
        metavar=flag.metavar,
        help=shared_help("retries", default=retries_default),
    )
    _add_cluster_option(group)


def _add_server_pid_option(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--server-pid",
        type=int,
        metavar="PID",
        help="sample this process tree as the server (its CPU per request, and other"
        " processes' CPU on its cores); default: the process listening on the target's"
        " port, when this user can see it; 0: sample none",
    )


def _add_cluster_option(group: argparse._ArgumentGroup) -> None:
    flag = SHARED_BY_NAME["cluster"]
    group.add_argument(flag.cli_flag, metavar=flag.metavar, help=shared_help("cluster"))


def _add_output_options(
    parser: argparse.ArgumentParser, what: str, schema: str, *, pictures: bool = False
) -> None:
    """``--json`` (``schema`` is what it writes), with ``pictures`` ``--plot`` and
    ``--html`` too, of ``what`` ("the result", "the sweep" ...); ``--quiet``, ``--progress``."""
    out = parser.add_argument_group("output")
    for name in ("json", "plot", "html") if pictures else ("json",):
        flag = SHARED_BY_NAME[name]
        text = shared_help(name, what=what) + (f" ({schema})" if name == "json" else "")
        out.add_argument(flag.cli_flag, type=Path, metavar=flag.metavar, help=text)
    out.add_argument("--quiet", action="store_true", help="no text report")
    out.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="live progress on stderr (default: when stderr is a terminal)",
    )


def build_parser(command: str | None = None, *, alone: bool = False) -> argparse.ArgumentParser:
    """The ``netbench`` parser; every subcommand's options, or only ``command``'s (none for
    ``""``). The others are listed with their one-line help, so ``netbench --help`` is
    whole: a command pays for its own options only, and ``--help`` for none (issue 35).
    ``alone``: ``command`` is the first word, so nothing asks for the list of the others,
    and they are left out (each is a parser of its own to make)."""
    parser = argparse.ArgumentParser(
        prog="netbench",
        description="Drive load at a server on this machine (HTTP/1.1, HTTP/2, gRPC,"
        " WebSocket, streams, raw TCP, user flows) and report exact latency percentiles,"
        " errors by kind and the generator's own health.",
    )
    # Every command in the usage line (argparse's own form of it) when the others are
    # left out, as a usage error prints it (its command is known: no invalid choice).
    every = "{" + ",".join(_SUBCOMMANDS) + "}" if alone and command else None
    sub = parser.add_subparsers(dest="command", required=True, metavar=every)
    for name, (help_text, add_options) in _SUBCOMMANDS.items():
        if alone and command and name != command:
            continue
        subparser = sub.add_parser(name, help=help_text)
        if command is None or command == name:
            add_options(subparser)
    return parser


def command_named(argv: Sequence[str]) -> str:
    """The subcommand ``argv`` names (the top level takes no option with a value, so it is
    the first word not starting with a dash), or ``""``."""
    first = next((word for word in argv if not word.startswith("-")), "")
    return first if first in _SUBCOMMANDS else ""


def _add_http(http: argparse.ArgumentParser) -> None:
    http.description = "HTTP/1.1 load at URL"
    http.add_argument("url", help="http:// or https:// URL on loopback")
    http_run = add_load_flags(http, "http")
    _add_run_flags(http_run, retries_default="0")
    _add_server_pid_option(http_run)
    _add_output_options(http, "the result", "LoadResult.to_dict()", pictures=True)
    http.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    http.add_argument(
        "--profile",
        action="store_true",
        help="after the load, profile the server in a run of its own (py-spy for Python,"
        " perf for native servers) and show its top functions: the process behind the"
        " target's port, or --server-pid's",
    )
    add_threshold_option(http)
    http.add_argument(
        "--show-requests",
        type=int,
        metavar="N",
        help="print the first N requests the load would send, rendered from its feeders,"
        " and exit without sending anything (as k6 inspect)",
    )


def _add_echo(echo: argparse.ArgumentParser) -> None:
    echo.description = "TCP echo load"
    echo.add_argument("target", metavar="HOST:PORT")
    echo_run = add_load_flags(echo, "echo")
    _add_run_flags(echo_run, retries_default="0")
    _add_server_pid_option(echo_run)
    _add_output_options(echo, "the result", "LoadResult.to_dict()", pictures=True)
    echo.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    add_threshold_option(echo)


def _add_ws(ws: argparse.ArgumentParser) -> None:
    ws.description = "WebSocket message round trips at URL"
    ws.add_argument("url", help="ws:// URL on loopback")
    ws_run = add_load_flags(ws, "ws")
    _add_run_flags(ws_run, retries_default="0")
    _add_server_pid_option(ws_run)
    _add_output_options(ws, "the result", "LoadResult.to_dict()", pictures=True)
    ws.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    add_threshold_option(ws)


def _add_compare(compare: argparse.ArgumentParser) -> None:
    from pytest_netbench._cli.compare import add_compare_options

    add_compare_options(compare)


def _add_servers(servers: argparse.ArgumentParser) -> None:
    servers.add_argument(
        "--app", choices=("hello", "echo", "ws", "h2c", "h2", "grpc"), default=None
    )


def _add_sse(sse: argparse.ArgumentParser) -> None:
    sse.description = (
        "Streams of server-sent events at URL, each read as it arrives:"
        " --connections streams at once (or --rate new ones a second), timed from the"
        " request's send (open loop: from when it was due) to its first byte, its first"
        " event, each gap between events and its end. --stream chunks times each chunk of"
        " a body that is not SSE; --stream-events N and --stream-end '[DONE]' check each"
        " stream (else a verify error)."
    )
    sse.add_argument("url", help="http:// or https:// URL on loopback")
    sse_run = add_load_flags(sse, "http")
    _add_run_flags(sse_run, retries_default="0")
    _add_server_pid_option(sse_run)
    _add_output_options(sse, "the result", "LoadResult.to_dict()", pictures=True)
    sse.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    add_threshold_option(sse)


def _add_llm(llm: argparse.ArgumentParser) -> None:
    from pytest_netbench._cli.llm import LLM_SETS, add_llm_options
    from pytest_netbench._input.options import LLM_OPTIONS

    add_llm_options(llm)
    own = llm.add_argument_group("LLM")
    for option in LLM_OPTIONS:
        add_option_flag(own, option)
    llm_run = add_load_flags(llm, "http", skip=LLM_SETS)
    _add_run_flags(llm_run, retries_default="0")
    _add_server_pid_option(llm_run)
    _add_output_options(llm, "the result", "LoadResult.to_dict()", pictures=True)
    llm.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    add_threshold_option(llm)
    llm.add_argument(
        "--show-requests",
        type=int,
        metavar="N",
        help="print the first N requests the load would send and exit without sending anything",
    )


# The HTTP load options a gRPC call sets itself, or that no call takes (``_input.grpc``).
GRPC_LEFT_OUT = frozenset(
    {"method", "body", "mix", "mix_order", "feeders", "pipeline", "protocol", "checks"}
)


def _add_grpc(grpc: argparse.ArgumentParser) -> None:
    grpc.description = (
        "gRPC unary calls to --method at URL, over HTTP/2 (h2c on http://,"
        " TLS with ALPN h2 on https://); --streams calls in flight per connection."
        " status codes are grpc-status codes (0: OK). --stream grpc reads a"
        " server-streaming method's messages as they arrive (first message, gaps, messages"
        " a call; --stream-events N checks the count)."
    )
    grpc.add_argument("url", help="http:// or https:// URL of the server, on loopback")
    call = grpc.add_argument_group("call")
    call.add_argument(
        "--method",
        dest="grpc_method",
        required=True,
        metavar="/PKG.SERVICE/METHOD",
        help="the gRPC method, e.g. /helloworld.Greeter/SayHello",
    )
    message = call.add_mutually_exclusive_group()
    message.add_argument(
        "--message-hex",
        metavar="HEX",
        help="the serialized request message, in hex (e.g. from protoc --encode | xxd -p)",
    )
    message.add_argument(
        "--message-file",
        type=Path,
        metavar="PATH",
        help="a file holding the serialized request message (protoc --encode's output)",
    )
    message.add_argument(
        "--data",
        metavar="JSON",
        help='the request message as JSON, as ghz takes it (\'{"name": "x"}\'), typed'
        " by --proto or, without it, by the server's reflection",
    )
    message.add_argument(
        "--data-file", type=Path, metavar="PATH", help="a file holding --data's JSON"
    )
    call.add_argument(
        "--proto",
        type=Path,
        action="append",
        metavar="FILE",
        help="the .proto declaring --method (repeatable; compiled at run time with"
        " grpcio-tools); without it, --data is typed by the server's reflection",
    )
    call.add_argument(
        "--import-paths",
        "-i",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="where --proto's imports are found (repeatable; as protoc's -I)",
    )
    call.add_argument(
        "--deadline",
        type=parse_duration,
        metavar="SECONDS",
        help="each call's deadline, sent as grpc-timeout (the server ends a call past it"
        " as DEADLINE_EXCEEDED, code 4)",
    )
    grpc_run = add_load_flags(grpc, "http", skip=GRPC_LEFT_OUT)
    _add_run_flags(grpc_run, retries_default="0")
    _add_server_pid_option(grpc_run)
    _add_output_options(grpc, "the result", "LoadResult.to_dict()", pictures=True)
    grpc.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    add_threshold_option(grpc)


# The load options a user flow takes from the option table; users and sessions are its own.
FLOW_LOAD_OPTIONS = frozenset(
    {
        "duration",
        "rate",
        "arrival",
        "stages",
        "warmup",
        "timeout",
        "connect_timeout",
        "loop",
        "seed",
        "allow_remote",
        "workers",
        "cpus",
    }
)


def _add_scenarios(parser: argparse.ArgumentParser) -> None:
    """``netbench scenarios FILE [URL]`` (``_cli/scenarios.py`` runs it)."""
    parser.description = (
        "Several named loads at once against one server, each its own shape,"
        " start and duration, from FILE: a [scenarios.NAME] table each (path, start, and the"
        " options of netbench http by their Python names)."
    )
    parser.add_argument("file", type=Path, help="the scenarios, a .toml file")
    parser.add_argument("url", nargs="?", help="the server (default: the file's url)")
    _add_server_pid_option(parser.add_argument_group("server"))
    parser.add_argument(
        "--threshold",
        action="append",
        metavar="EXPR",
        help="terms all of them together must meet (one scenario: by_request.NAME.p99_ms);"
        " repeatable; exit 9 if one fails",
    )
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, metavar="PATH", help="write ScenariosResult.to_dict()")
    out.add_argument("--quiet", action="store_true", help="no text report")
    out.add_argument("--fail-invalid", action="store_true", help="exit 5 if a result is invalid")


def _add_flow(flow: argparse.ArgumentParser) -> None:
    flow.description = (
        "Virtual users, each running the flow MODULE:FUNCTION in a loop with its"
        " own httpx client, cookies and connection; each request is a step of the report."
        " Needs the flows extra (httpx)."
    )
    flow.add_argument(
        "flow",
        metavar="MODULE:FUNCTION",
        help="e.g. shop_flows:shopper; several by weight: shop:browse=3,shop:buy=1",
    )
    flow.add_argument("url", help="http:// or https:// URL on loopback")
    group = add_load_flags(flow, "http", only=FLOW_LOAD_OPTIONS)
    group.add_argument(
        "-u",
        "--users",
        type=int,
        default=10,
        metavar="N",
        help="virtual users, a connection each [10]",
    )
    group.add_argument("--sessions", type=int, metavar="N", help="stop after N sessions in all")
    group.add_argument(
        "--max-users",
        type=int,
        metavar="N",
        help="with --rate: the most users running sessions at once (default: --users, at"
        " least 1024)",
    )
    group.add_argument(
        "--client",
        choices=("httpx", "lean"),
        default="httpx",
        help="the flow's client: httpx.AsyncClient, or the lean client (the same verbs at a"
        " fraction of httpx's cost) [httpx]",
    )
    _add_cluster_option(group)
    _add_output_options(flow, "the result", "LoadResult.to_dict()")
    flow.add_argument("--fail-invalid", action="store_true", help="exit 5 if result is invalid")
    add_threshold_option(flow)


def add_threshold_option(parser: argparse.ArgumentParser) -> None:
    """``--threshold EXPR``: terms the result must meet, read as capacity's ``--slo`` is."""
    parser.add_argument(
        "--threshold",
        action="append",
        metavar="EXPR",
        help="terms the result must meet, as k6's thresholds: <metric> <op> <number> joined"
        " by 'and' or ',' (e.g. 'p99_ms<50,error_rate<0.01'); repeatable; each is printed"
        " with its value, and exit 9 if one fails",
    )


def _add_sweep(sweep: argparse.ArgumentParser) -> None:
    sweep.description = (
        "One open-loop load per rate, each printed as a row as it finishes"
        " (demanded and achieved rate, latency corrected and uncorrected, errors)."
    )
    sweep.add_argument("url", help="http:// or https:// URL on loopback")
    group = sweep.add_argument_group("sweep")
    group.add_argument(
        "--rates",
        required=True,
        help="start:stop:step, the stop included (100:2000:100), or a list (100,500,1000)",
    )
    group.add_argument(
        "--stop-p99-ms", type=float, metavar="MS", help="stop after a step whose p99 passes MS"
    )
    group.add_argument(
        "--stop-error-rate",
        type=parse_fraction,
        metavar="F",
        help="stop after a step with more errors per request than F (e.g. 0.05 or 5%%)",
    )
    load = add_load_flags(sweep, "http", per="step", skip=_SWEEP_SKIP)
    _add_run_flags(load, retries_default="2")
    _add_output_options(sweep, "the sweep", "SweepResult.to_dict()", pictures=True)
    sweep.add_argument("--fail-invalid", action="store_true", help="exit 5 if a step is invalid")


def _add_capacity(capacity: argparse.ArgumentParser) -> None:
    capacity.description = (
        "Search for the highest open-loop rate at which the server meets the SLO"
        " (bracketing, then bisecting), printing each step as it goes; with --over"
        " connections, the most connections at once in closed loop (concurrent streams)."
    )
    capacity.add_argument("url", help="http:// or https:// URL on loopback")
    group = capacity.add_argument_group("search")
    # The defaults shown are read from the library's signature, never typed again here.
    from pytest_netbench._experiment.capacity import capacity as search

    default = _defaults_of(search)
    group.add_argument(
        "--slo",
        default=default["slo"],
        help="terms joined by 'and': <metric> <op> <number> [%(default)s]",
    )
    group.add_argument(
        "--max-error-rate",
        type=parse_fraction,
        default=default["max_error_rate"],
        metavar="F",
        help="errors per request allowed at a passing rate [%(default)s]",
    )
    group.add_argument(
        "--precision",
        type=parse_fraction,
        default=default["precision"],
        metavar="F",
        help="how close the bounds must come, a fraction or a percentage [%(default)s]",
    )
    group.add_argument(
        "--start-rate",
        type=float,
        metavar="N",
        help="first rate tried [3/4 of a closed-loop run's req/s]",
    )
    group.add_argument(
        "--min-rate",
        type=float,
        metavar="N",
        help=f"never try below this rate [{default['min_rate']:g}]",
    )
    group.add_argument("--max-rate", type=float, metavar="N", help="never try above this rate")
    group.add_argument(
        "--max-steps", type=int, metavar="N", help=f"a budget of steps [{default['max_steps']}]"
    )
    group.add_argument(
        "--over",
        choices=("rate", "connections"),
        default=default["over"],
        help="what the search varies: the open-loop rate, or the connections held at once"
        " in closed loop (with --stream, concurrent streams); --start-rate, --min-rate and"
        " --max-rate then count connections [%(default)s]",
    )
    load = add_load_flags(capacity, "http", per="step", skip=_SWEEP_SKIP)
    _add_run_flags(load, retries_default="2")
    _add_output_options(capacity, "the search", "CapacityResult.to_dict()", pictures=True)


def _add_cold_start(cold: argparse.ArgumentParser) -> None:
    cold.description = (
        "One closed-loop run from the server's very first request, with no"
        " warm-up, its timeline printed a row per --resolution: how a JIT or a cache warms"
        " up. Start the server fresh before each run."
    )
    cold.add_argument("url", help="http:// or https:// URL on loopback")
    group = cold.add_argument_group("cold start")
    from pytest_netbench._experiment.cold_start import cold_start

    default = _defaults_of(cold_start)
    group.add_argument(
        "--resolution",
        type=parse_duration,
        metavar="T",
        help=f"one timeline row per this long [{default['resolution']:g}s]",
    )
    group.add_argument(
        "--settle-tolerance",
        type=parse_fraction,
        metavar="F",
        help="settled: req/s within F of the steady rate to the end"
        f" [{default['settle_tolerance']:g}]",
    )
    group.add_argument(
        "--settle-window",
        type=parse_duration,
        metavar="T",
        help="settling is judged over windows this long (1s, or a quarter of a shorter run)",
    )
    load = add_load_flags(cold, "http", skip=_COLD_SKIP)
    _add_run_flags(load, retries_default="0: a rerun meets a warm server")
    _add_output_options(cold, "the cold start", "ColdStartResult.to_dict()", pictures=True)
    cold.add_argument("--fail-invalid", action="store_true", help="exit 5 if it is invalid")
    add_threshold_option(cold)


def _add_crosscheck(cross: argparse.ArgumentParser) -> None:
    cross.description = (
        "Run one closed-loop load with netbench, then the same load with wrk or"
        " ab (when installed), and print req/s, p50, p90, p99 and errors of both with their"
        " ratio (netbench / the other tool). With --tool h2load, an HTTP/2 load: req/s, mean,"
        " sd, max and errors (h2load prints no percentiles)."
    )
    cross.add_argument("url", help="http:// URL on loopback")
    cross.add_argument(
        "--tool",
        choices=("wrk", "ab", "h2load"),
        default="wrk",
        help="the second tool (wrk); h2load for an HTTP/2 load (--protocol h2 by default)",
    )
    cross.add_argument(
        "--no-bracket",
        dest="bracket",
        action="store_false",
        help="run netbench once, before the other tool, not also after it (its two runs"
        " bracket the other's and mark a server that changed meanwhile)",
    )
    # wrk runs whole seconds with keep-alive, a thread per worker; ab needs --requests.
    load = add_load_flags(cross, "http", only=_CROSSCHECK_ONLY)
    load.add_argument(
        "--retries", type=int, metavar="N", help="reruns of a spoiled netbench run [2]"
    )
    out = cross.add_argument_group("output")
    out.add_argument(
        "--json", type=Path, metavar="PATH", help="write CrosscheckResult.to_dict() here"
    )
    out.add_argument("--quiet", action="store_true", help="no text report")


def given(**options: Any) -> dict[str, Any]:
    """The options the user set: the rest take the library's defaults (``_input.spec``)."""
    return {name: value for name, value in options.items() if value is not None}


def load_options(args: argparse.Namespace, load: LoadKind) -> dict[str, Any]:
    """The options of ``load`` the user gave on the command line, as the library takes
    them; the rest take the library's defaults."""
    from pytest_netbench._input.options import options_of

    values = {
        option.name: getattr(args, option.name)
        for option in options_of(load)
        if getattr(args, option.name, None) is not None
    }
    body = values.get("body")
    if isinstance(body, str) and body.startswith("@"):
        try:
            values["body"] = Path(body[1:]).read_bytes()
        except OSError as exc:
            raise SpecError(f"cannot read the body file {body[1:]!r}: {exc}") from None
    if "feeders" in values:
        values["feeders"] = _feeders_given(values["feeders"])
    if "mix" in values:
        values = _with_mix_file(values, getattr(args, "url", None))
    return values


def _feeders_given(pairs: list[tuple[str, Feeder]]) -> dict[str, Feeder]:
    feeders: dict[str, Feeder] = {}
    for name, feeder in pairs:
        if name in feeders:
            raise SpecError(f"--feeder: two feeders are named {name!r}: give each its own name")
        feeders[name] = feeder
    return feeders


def _with_mix_file(values: dict[str, Any], url: str | None) -> dict[str, Any]:
    """``--mix FILE`` read into the options it gives; the command line's own ``--mix-order``
    and ``--seed`` win over the file's, and its ``--feeder``s join the file's feeders."""
    from pytest_netbench._input.mix_file import load_mix

    path = values["mix"]
    from_file: dict[str, Any] = dict(load_mix(path, url=url))
    given = values.get("feeders", {})
    in_both = sorted(set(given) & set(from_file.get("feeders", {})))
    if in_both:
        raise SpecError(f"feeder {in_both[0]!r} is given both in {path} and by --feeder: drop one")
    merged = {**from_file, **values, "mix": from_file["mix"]}
    if given or "feeders" in from_file:
        merged["feeders"] = {**from_file.get("feeders", {}), **given}
    if "checks" in from_file:  # --check joins the file's checks
        merged["checks"] = [*from_file["checks"], *(values.get("checks") or ())]
    return merged


# The subcommands, in ``netbench --help``'s order: each one's line there, and what adds
# its options (``build_parser`` calls only the one being run).
_SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "http": ("HTTP/1.1 load", _add_http),
    "echo": ("raw TCP echo load", _add_echo),
    "ws": ("WebSocket load", _add_ws),
    "sse": ("streams of server-sent events, read as they arrive", _add_sse),
    "llm": ("token streams of an OpenAI-compatible LLM server, a prompt each", _add_llm),
    "grpc": ("gRPC unary calls over HTTP/2", _add_grpc),
    "sweep": ("open-loop load at a series of rates, one table row per rate", _add_sweep),
    "capacity": ("the highest open-loop rate that meets an SLO", _add_capacity),
    "cold-start": (
        "one closed-loop run from the very first request, read at 100 ms",
        _add_cold_start,
    ),
    "crosscheck": (
        "the same load measured by netbench and by wrk, ab or h2load, side by side",
        _add_crosscheck,
    ),
    "compare": ("compare two stored runs (the regression gate outside pytest)", _add_compare),
    "flow": (
        "virtual users running a user flow (an async function of an httpx client)",
        _add_flow,
    ),
    "scenarios": (
        "several named loads at once against one server, from a TOML file (k6's scenarios)",
        _add_scenarios,
    ),
    "servers": ("list the catalog of reference servers", _add_servers),
}
