"""Every option of a load, declared once: name, default, unit, help and the loads it applies to.

The library's signatures (``**options: Unpack[HttpOptions]``), the checks of
:mod:`pytest_netbench._input.spec`, the ``netbench`` command's flags and the docs' option table
are all read from :data:`LOAD_OPTIONS`; a test holds the ``TypedDict`` classes below, every
public entry point's signature and every subcommand's flags to it, so a new option is one
row here and one line in the ``TypedDict``, never a fourth copy. An LLM load's own options
(``model``, ``prompts``, ``max_tokens``...) are the rows of :data:`LLM_OPTIONS`, read the
same way (``LlmOptions``, ``netbench llm``'s flags, :func:`split_llm_options`).

Naming rules (docs/architecture.md): an option's CLI flag is its name with dashes
(``requests_per_connection`` -> ``--requests-per-connection``); a boolean that defaults to
on is turned off with ``--no-NAME``; an argument in seconds carries no unit suffix
(``duration``, ``warmup``), a figure in any other unit carries it (``stop_p99_ms``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Required, TypedDict

from pytest_netbench._errors import SpecError
from pytest_netbench._input.llm import LLM_APIS, PromptsArg
from pytest_netbench._model import (
    ARRIVALS,
    HTTP_PROTOCOLS,
    LOOPS,
    MIX_ORDERS,
    WS_ANSWERS,
    Check,
    Request,
)
from pytest_netbench._model.feeder_base import Feeder
from pytest_netbench._model.stages import Stage
from pytest_netbench._public import publish

LoadKind = Literal["http", "echo", "ws"]
# What an option takes: how its value is written on the command line (and its unit in
# the docs).
ValueForm = Literal[
    "count",
    "seconds",
    "per_second",
    "switch",
    "choice",
    "text",
    "size",
    "headers",
    "body",
    "mix_file",
    "feeder",
    "stages",
    "checks",
]
HeadersArg = Mapping[str, str] | Sequence[tuple[str, str]] | None
# One stage of a ramp as users write it: Stage(30, 100), ("30s", 100), k6's mapping.
StageArg = Stage | tuple[float | str, float] | Mapping[str, float | str]

_EVERY: frozenset[LoadKind] = frozenset({"http", "echo", "ws"})
_HTTP: frozenset[LoadKind] = frozenset({"http"})
_ECHO: frozenset[LoadKind] = frozenset({"echo"})
_WS: frozenset[LoadKind] = frozenset({"ws"})
# The options an upgrade request shares with an HTTP request.
_HTTP_AND_WS: frozenset[LoadKind] = frozenset({"http", "ws"})
_HTTP_AND_ECHO: frozenset[LoadKind] = frozenset({"http", "echo"})


@dataclass(frozen=True, slots=True)
class LoadOption:
    """One option of a load: what the library takes, the CLI offers and the docs list."""

    name: str
    default: object
    takes: ValueForm
    help: str
    loads: frozenset[LoadKind] = _EVERY
    choices: tuple[str, ...] = ()
    short: str = ""
    # The long flag when it is not ``--`` + the name with dashes (a documented exception).
    flag: str = ""
    # False: a Python value with no command-line form (a list of Request objects).
    on_cli: bool = True
    # What ``--no-NAME`` does, for a switch that defaults to on.
    off_help: str = ""
    metavar: str = ""
    # A keyword the load cannot do without (its flag is required; no default).
    required: bool = False

    @property
    def unit(self) -> str:
        return {"seconds": "s", "per_second": "/s", "size": "bytes"}.get(self.takes, "")

    @property
    def cli_flag(self) -> str:
        """The long flag: ``--name``, or ``--no-name`` for a switch that defaults to on."""
        if self.flag:
            return self.flag
        dashed = self.name.replace("_", "-")
        return f"--no-{dashed}" if self.default is True else f"--{dashed}"


LOAD_OPTIONS: tuple[LoadOption, ...] = (
    LoadOption(
        "connections",
        10,
        "count",
        "connections held open (closed loop), or the pool to start with (open loop)",
        short="-c",
    ),
    LoadOption(
        "duration",
        None,
        "seconds",
        "measured time, warm-up excluded (10 s when neither duration nor requests is given)",
        short="-d",
    ),
    LoadOption("requests", None, "count", "stop after this many requests", short="-n"),
    LoadOption("rate", None, "per_second", "open loop: a fixed arrival rate, requests a second"),
    LoadOption("arrival", "uniform", "choice", "open loop: spacing of sends", choices=ARRIVALS),
    LoadOption(
        "stages",
        None,
        "stages",
        "load that changes over time, as k6's stages: each stage moves the rate (with rate=,"
        " its start) or else the connections (from connections=, or 0) linearly to its target;"
        " their durations add up to the duration (CLI: --stage 30s:100, repeated)",
        flag="--stage",  # one stage a flag, repeated, as k6's
        metavar="DURATION:TARGET",
        loads=_HTTP_AND_ECHO,  # a WebSocket load does not ramp yet
    ),
    LoadOption(
        "max_connections",
        None,
        "count",
        "open loop: the most connections the pool grows to (connections, at least 1,024)",
    ),
    LoadOption("warmup", 0.0, "seconds", "time before the measured window, not counted"),
    LoadOption("timeout", 10.0, "seconds", "a request not answered by then is a timeout error"),
    LoadOption("connect_timeout", 5.0, "seconds", "a connect not done by then is an error"),
    LoadOption("workers", 1, "count", "generator processes (or Dask workers), a share each"),
    LoadOption(
        "cpus",
        None,
        "text",
        "the CPUs the generator runs on, e.g. '0' or '2-3' (pin the server apart)",
        metavar="LIST",
    ),
    LoadOption("loop", "auto", "choice", "event loop (auto: uvloop if installed)", choices=LOOPS),
    LoadOption("allow_remote", False, "switch", "allow a target outside loopback"),
    LoadOption(
        "drain",
        True,
        "switch",
        "after the window, send what still waits and await every answer (up to timeout)",
        off_help="end at the window's close; requests still out count as in flight, each"
        " in the corrected latency at a lower bound",
    ),
    LoadOption("timeline_resolution", 1.0, "seconds", "the span of one timeline row"),
    LoadOption(
        "connect_first",
        None,
        "switch",
        "closed loop: open every connection before the window (default: on for echo, off for http)",
    ),
    LoadOption("connect_rate", None, "per_second", "connects a second at most, with connect_first"),
    LoadOption(
        "probe_every",
        None,
        "seconds",
        "every this long one more client connects, makes one exchange and leaves (its wait"
        " is result.probe)",
    ),
    # HTTP
    LoadOption("method", "GET", "text", "request method", loads=_HTTP, short="-m"),
    LoadOption(
        "headers",
        None,
        "headers",
        "request headers (WebSocket: the handshake's) (CLI: 'Name: value', repeated)",
        loads=_HTTP_AND_WS,
        short="-H",
        flag="--header",  # one header a flag, repeated, as curl's
    ),
    LoadOption(
        "body", b"", "body", "request body (CLI: text, or @FILE)", _HTTP, metavar="TEXT|@FILE"
    ),
    LoadOption(
        "keepalive",
        True,
        "switch",
        "reuse connections (off: one per request)",
        loads=_HTTP,
        off_help="a new connection per request (ab without -k)",
    ),
    LoadOption(
        "requests_per_connection",
        0,
        "count",
        "close a connection after this many requests (0: never)",
        loads=_HTTP,
    ),
    LoadOption(
        "pipeline",
        1,
        "count",
        "closed loop: requests in flight a connection, with keep-alive (WebSocket: with answer=id)",
        _HTTP_AND_WS,
    ),
    LoadOption(
        "protocol",
        "http1",
        "choice",
        "HTTP version: http1 (HTTP/1.1), h2 (HTTP/2: prior knowledge on http://, ALPN h2 on"
        " https://), or auto (https://: ALPN offers h2 and http/1.1 and the load speaks what"
        " the server picks; http://: HTTP/1.1)",
        loads=_HTTP,
        choices=HTTP_PROTOCOLS,
    ),
    LoadOption(
        "streams",
        1,
        "count",
        "HTTP/2: concurrent streams a connection (h2load's -m); a stream is one request",
        loads=_HTTP,
    ),
    LoadOption(
        "verify_tls",
        True,
        "switch",
        "check the server's TLS certificate",
        loads=_HTTP_AND_WS,
        off_help="don't check the server's TLS certificate (a self-signed test server)",
    ),
    LoadOption("proxy", None, "text", "send through this HTTP proxy", _HTTP, metavar="HOST:PORT"),
    LoadOption(
        "stream",
        None,
        "choice",
        "read each response as it arrives: sse (server-sent events), chunks (each chunk of"
        " the body an event) or openai (an OpenAI-compatible token stream: TTFT, ITL, TPOT);"
        " a gRPC load's grpc (each message of a server-streaming call an event);"
        " figures in result.stream",
        loads=_HTTP,
        choices=("sse", "chunks", "openai", "grpc"),
    ),
    LoadOption(
        "stream_events",
        None,
        "count",
        "a stream is whole with exactly this many events (else a verify error)",
        loads=_HTTP,
    ),
    LoadOption(
        "stream_end",
        None,
        "text",
        "a stream is whole when its last event's data is this end marker, e.g. [DONE]",
        loads=_HTTP,
        metavar="DATA",
    ),
    LoadOption(
        "goodput",
        None,
        "text",
        "count the streams that meet an SLO in ms, as vLLM's --goodput: ttft:200 tpot:50"
        " (metrics ttft, tpot, e2el); result.stream.goodput is those a second",
        loads=_HTTP,
        metavar="SLO",
    ),
    LoadOption(
        "mix",
        None,
        "mix_file",
        "several Request(...) kinds instead of one request; the URL names the server only"
        " (CLI: a file of vegeta targets, or .json/.toml with weights and feeders)",
        loads=_HTTP,
        metavar="FILE",
    ),
    LoadOption(
        "mix_order",
        "cycle",
        "choice",
        "a mix's order: each in turn, or interleaved by weight",
        loads=_HTTP,
        choices=MIX_ORDERS,
    ),
    LoadOption(
        "checks",
        None,
        "checks",
        "checks of every response, as k6's check: each named, its passes and failures"
        " counted, a failure a verify error (CLI: --check 'body contains ok', repeated;"
        " docs/checks.md)",
        loads=_HTTP,
        flag="--check",  # one check a flag, repeated, as headers
        metavar="'[NAME: ]CHECK'",
    ),
    LoadOption(
        "feeders",
        None,
        "feeder",
        "named feeders (feeders.csv(...), feeders.count(), ...) whose values fill the ${name}"
        " placeholders of the path, header values and body (CLI: NAME=KIND:ARGS, repeated)",
        loads=_HTTP,
        flag="--feeder",  # one feeder a flag, repeated, as headers
        metavar="NAME=KIND:ARGS",
    ),
    LoadOption(
        "seed",
        0,
        "count",
        "the seed of the feeders' random draws: the same seed, the same requests",
        loads=_HTTP,
    ),
    # raw TCP (echo)
    LoadOption(
        "payload",
        None,
        "text",
        "the bytes of one exchange (default: payload_bytes of a verifiable pattern)",
        loads=_ECHO,
        on_cli=False,
    ),
    LoadOption("payload_bytes", 512, "size", "size of the generated payload", loads=_ECHO),
    LoadOption("chunk", None, "size", "write size (default: the whole payload)", loads=_ECHO),
    LoadOption(
        "framing",
        "echo",
        "text",
        "echo (verify the bytes), fixed:N, line, length-prefixed:N",
        loads=_ECHO,
        metavar="FRAMING",
    ),
    # WebSocket
    LoadOption(
        "message",
        None,
        "text",
        "the message each round trip sends and expects back (str: a text message, bytes:"
        " binary; default: message_bytes of a pattern)",
        loads=_WS,
        metavar="TEXT",
    ),
    LoadOption("message_bytes", 64, "size", "size of the generated message", loads=_WS),
    LoadOption("binary", False, "switch", "send binary messages (default: text)", loads=_WS),
    LoadOption(
        "subprotocols",
        None,
        "text",
        "the subprotocols the handshake offers, in order of preference (CLI: comma-separated)",
        loads=_WS,
        metavar="NAME,...",
    ),
    LoadOption(
        "answer",
        "echo",
        "choice",
        "what answers a message: its echo, checked byte for byte, any message that comes"
        " next, or (id) the one carrying its id in the field id_field",
        loads=_WS,
        choices=WS_ANSWERS,
    ),
    LoadOption(
        "id_field",
        None,
        "text",
        "answer=id: the JSON field of a message and its answer holding the message's id"
        " (default: id)",
        loads=_WS,
        metavar="FIELD",
    ),
    LoadOption(
        "listen",
        False,
        "switch",
        "hold the connections open and count what the server pushes (send no messages)",
        loads=_WS,
    ),
    LoadOption(
        "ping_every",
        None,
        "seconds",
        "listen: a client ping on each connection this often (no pong within timeout: lost)",
        loads=_WS,
    ),
    LoadOption(
        "stamp_field",
        None,
        "text",
        "listen: the JSON field of a push holding its send time (epoch s, ms, us or ns)",
        loads=_WS,
        metavar="FIELD",
    ),
    LoadOption(
        "stamp_binary",
        False,
        "switch",
        "listen: a binary push's first 8 bytes are its send time (big-endian epoch time)",
        loads=_WS,
    ),
)

BY_NAME: dict[str, LoadOption] = {option.name: option for option in LOAD_OPTIONS}

# An LLM load's own options (``llm_load``, ``netbench.llm``, ``netbench llm``): what its
# request bodies are made of (``_input.llm``). The load takes the HTTP options besides, less
# those it sets itself; ``loads`` says it is an HTTP load.
LLM_OPTIONS: tuple[LoadOption, ...] = (
    LoadOption(
        "model", None, "text", "the served model's name each request asks for", _HTTP, required=True
    ),
    LoadOption(
        "prompts",
        None,
        "text",
        "JSON lines (Python: or a list), a request each, sent in turn (then again from the"
        ' first): a string (the prompt), or an object with "prompt" (text) or "messages" (a'
        ' chat list), and "max_tokens" if its own; default: one prompt',
        _HTTP,
        metavar="FILE",
    ),
    LoadOption(
        "max_tokens",
        128,
        "count",
        "output tokens each request asks for, where its prompt gives none",
        _HTTP,
    ),
    LoadOption(
        "api",
        None,
        "choice",
        "the request's shape: chat (messages) or completions (prompt); default: from the"
        " URL's path (chat for .../chat/completions)",
        _HTTP,
        choices=LLM_APIS,
    ),
    LoadOption(
        "extra",
        None,
        "text",
        'a JSON object merged into every body, e.g. {"temperature": 0, "ignore_eos": true}',
        _HTTP,
        metavar="JSON",
    ),
)


class CommonOptions(TypedDict, total=False):
    """The options HTTP and echo loads share (see :data:`LOAD_OPTIONS` for each's meaning)."""

    connections: int
    duration: float | None
    requests: int | None
    rate: float | None
    arrival: str
    max_connections: int | None
    warmup: float
    timeout: float
    connect_timeout: float
    workers: int
    cpus: str | Sequence[int] | None
    loop: str
    allow_remote: bool
    drain: bool
    timeline_resolution: float
    connect_first: bool | None
    connect_rate: float | None
    probe_every: float | None


class HttpOptions(CommonOptions, total=False):
    """The options of an HTTP load: ``http_load(url, **options)``, ``netbench.http``,
    ``netbench http`` and every experiment that takes a URL."""

    stages: Sequence[StageArg] | None
    method: str
    headers: HeadersArg
    body: bytes | str
    keepalive: bool
    requests_per_connection: int
    pipeline: int
    protocol: str
    streams: int
    verify_tls: bool
    proxy: str | None
    stream: str | None
    stream_events: int | None
    stream_end: str | None
    goodput: str | Mapping[str, float] | None
    mix: Sequence[Request] | None
    mix_order: str
    checks: Sequence[Check | str] | Mapping[str, str] | None
    feeders: Mapping[str, Feeder] | None
    seed: int


class WsOptions(CommonOptions, total=False):
    """The options of a WebSocket load: ``ws_load(url, **options)``, ``netbench.ws`` and
    ``netbench ws``."""

    headers: HeadersArg
    verify_tls: bool
    message: bytes | str | None
    message_bytes: int
    binary: bool
    subprotocols: str | Sequence[str] | None
    answer: str
    id_field: str | None
    pipeline: int
    listen: bool
    ping_every: float | None
    stamp_field: str | None
    stamp_binary: bool


class EchoOptions(CommonOptions, total=False):
    """The options of a raw TCP load: ``echo_load(host, port, **options)``, ``netbench.echo``
    and ``netbench echo``."""

    stages: Sequence[StageArg] | None
    payload: bytes | str | None
    payload_bytes: int
    chunk: int | None
    framing: str


class LlmOptions(HttpOptions, total=False):
    """The options of an LLM load: ``llm_load(url, **options)``, ``netbench.llm`` and
    ``netbench llm``: :data:`LLM_OPTIONS` and the HTTP options (less those it sets)."""

    model: Required[str]
    prompts: PromptsArg
    max_tokens: int
    api: str | None
    extra: Mapping[str, Any] | None


def options_of(load: LoadKind) -> tuple[LoadOption, ...]:
    return tuple(option for option in LOAD_OPTIONS if load in option.loads)


def with_defaults(
    load: LoadKind, given: Mapping[str, Any], *, also: Collection[str] = ()
) -> dict[str, Any]:
    """Every option of ``load``, the given ones over the defaults; an unknown name is a
    :class:`SpecError` naming the closest valid one. ``also``: names the caller takes
    besides (an experiment's own), offered as suggestions too."""
    check_names(load, given, also=also)
    values = {option.name: option.default for option in options_of(load)}
    values.update(given)
    return values


def check_names(load: LoadKind, given: Collection[str], *, also: Collection[str] = ()) -> None:
    known = {option.name for option in options_of(load)}
    for name in given:
        if name not in known:
            raise SpecError(unknown_option_message(name, load, [*known, *also]))


def split_llm_options(given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An LLM load's own options (:data:`LLM_OPTIONS`, the given over the defaults) and
    the rest, its HTTP options. A name that is neither, close to an LLM option's
    (``prompt=``, ``max_token=``), is a :class:`SpecError` naming it, before the HTTP
    options' check would call it unknown."""
    names = [option.name for option in LLM_OPTIONS]
    for name in given:
        if name not in names and name not in BY_NAME:
            import difflib  # a misspelling's only (issue 35)

            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            if close:
                raise SpecError(f"an LLM load takes no {name}=: did you mean {close[0]}=?")
    own = {option.name: given.get(option.name, option.default) for option in LLM_OPTIONS}
    return own, {name: value for name, value in given.items() if name not in own}


_KIND_WORDS: dict[LoadKind, str] = {"http": "HTTP", "echo": "echo (raw TCP)", "ws": "WebSocket"}
_LOAD_WORDS: dict[LoadKind, str] = {
    "http": "an HTTP load",
    "echo": "an echo (raw TCP) load",
    "ws": "a WebSocket load",
}


def unknown_option_message(name: str, load: LoadKind, known: Collection[str]) -> str:
    what = _LOAD_WORDS[load]
    option = BY_NAME.get(name)
    if option is not None and load not in option.loads:
        other = " and ".join(sorted(_KIND_WORDS[kind] for kind in option.loads))
        return f"{name!r} is an option of {other} loads, not of {what}"
    import difflib  # a misspelling's only (issue 35)

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "see docs/api.md for every option"
    return f"unknown option {name!r} for {what}: {hint}"


publish(globals())
