"""``netbench http``, ``netbench sse``, ``netbench echo``, ``netbench ws`` and ``netbench
grpc``: one load, reported as wrk and ab report theirs."""

from __future__ import annotations

import argparse
import functools
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_netbench._cli import collector
from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._cli.live import CommandLive
from pytest_netbench._cli.options import load_options
from pytest_netbench._cli.outputs import write_files
from pytest_netbench._errors import SpecError
from pytest_netbench._input.options import LoadKind
from pytest_netbench._model import LoadResult, Request

if TYPE_CHECKING:
    from pytest_netbench._experiment.slo import Slo, SloVerdict
    from pytest_netbench._servers.listening import ListeningServer

_LOAD_OF_COMMAND: dict[str, LoadKind] = {
    "http": "http",
    "echo": "echo",
    "ws": "ws",
    "grpc": "http",
    "sse": "http",
    "llm": "http",
}


def run_load(args: argparse.Namespace) -> ExitCode:
    """Run the load the arguments ask for; print, write, and say how it ended."""
    # Read first, so a mix file, a feeder or a term that cannot be read stops us before
    # any load.
    options = load_options(args, _LOAD_OF_COMMAND[args.command])
    if getattr(args, "show_requests", None) is not None:
        from pytest_netbench._cli.show_requests import show_requests

        return show_requests(args, options)
    thresholds = read_thresholds(args, requests=mix_names(options))
    if thresholds is not None:
        from pytest_netbench._model.windows import check_window_metrics

        resolution = options.get("timeline_resolution") or 1.0
        check_window_metrics((t.metric for t in thresholds.terms), float(resolution))
    check_plot(args)
    with CommandLive(progress=args.progress, quiet=args.quiet) as live:
        result = _run(args, live, options)
        live.clear()
    verdict = thresholds.evaluate(result) if thresholds is not None else None
    unwritten = write_files(args, result, stem=args.command)
    if not args.quiet:
        from pytest_netbench._report.summary import format_result

        print_report(result, format_result(result, thresholds=verdict))
    if unwritten is not None:
        return unwritten
    return load_status(result, verdict, fail_invalid=args.fail_invalid)


def read_thresholds(args: argparse.Namespace, *, requests: Sequence[str] = ()) -> Slo | None:
    """``--threshold`` (repeatable; each terms joined by 'and' or ','), read as an SLO; a
    misspelt metric, or a ``by_request.NAME`` term naming none of the mix's ``requests``,
    is a usage error naming the valid ones. None when not given."""
    given: list[str] | None = getattr(args, "threshold", None)
    if not given:
        return None
    from pytest_netbench._experiment.slo import check_slo_requests, parse_slo

    slo = parse_slo(" and ".join(given), what="threshold")
    check_slo_requests(slo, requests, what="threshold")
    return slo


def mix_names(options: Mapping[str, Any]) -> list[str]:
    """The names of the requests of a mix (``--mix``), as the result keys their figures."""
    mix: Sequence[Request] = options.get("mix") or ()
    return [request.label for request in mix]


def load_status(result: LoadResult, verdict: SloVerdict | None, *, fail_invalid: bool) -> ExitCode:
    """How a command about one load ended. A stop by Ctrl-C first; then a load in which
    nothing succeeded (its figures are no figures); then an invalid result, when asked
    (figures that cannot be trusted make no verdict on the server); then the thresholds."""
    if result.interrupted:
        return ExitCode.INTERRUPTED
    if result.ok == 0:
        return ExitCode.NO_SUCCESS
    if fail_invalid and not result.valid:
        return ExitCode.INVALID
    if verdict is not None and not verdict.passed:
        return ExitCode.THRESHOLD_FAILED
    return ExitCode.OK


def interrupted_banner(result: LoadResult) -> str:
    spec = result.spec
    asked = ""
    if spec is not None and spec.duration_s is not None:
        asked = f" of the {spec.duration_s:g} s asked for"
    elif spec is not None and spec.requests is not None:
        asked = f" ({result.sent:,} of {spec.requests:,} requests sent)"
    return f"INTERRUPTED after {result.duration_s:.2f} s{asked}: figures for that time only."


def print_report(result: LoadResult, text: str) -> None:
    """Print a load's report; an interrupted load's between two banners saying so."""
    if result.interrupted:
        text = f"{interrupted_banner(result)}\n{text}{interrupted_banner(result)}\n"
    print(text, end="")


def check_plot(args: argparse.Namespace) -> None:
    """With ``--plot``: fail before the load, not after it, when matplotlib is missing."""
    if getattr(args, "plot", None) is not None:
        from pytest_netbench._report.plots.canvas import require_matplotlib

        require_matplotlib()


def _run(args: argparse.Namespace, live: CommandLive, options: dict[str, Any]) -> LoadResult:
    """The command's load at its target, with the live line, the cluster and the retries;
    the server behind the target's port sampled (and with ``--profile``, profiled)."""
    from pytest_netbench._load.api import (
        echo_load,
        grpc_load,
        http_load,
        llm_load,
        sse_load,
        ws_load,
    )

    profile = bool(getattr(args, "profile", False))
    server = _profiled(args) if profile else sampled_server(args)
    load: Callable[..., LoadResult]
    if args.command == "grpc":
        message = grpc_message(args)
        load = functools.partial(
            grpc_load, args.url, args.grpc_method, message, deadline=args.deadline
        )
    elif args.command == "echo":
        from pytest_netbench._input.target import parse_host_port

        load = functools.partial(echo_load, *parse_host_port(args.target))
    elif profile:
        load = functools.partial(http_load, args.url, profile=True)
    elif args.command == "sse":
        load = functools.partial(sse_load, args.url)
    elif args.command == "llm":
        from pytest_netbench._cli.llm import llm_arguments

        load = functools.partial(llm_load, args.url, **llm_arguments(args))
    else:
        load = functools.partial(ws_load if args.command == "ws" else http_load, args.url)
    collector.release()  # the load's modules are imported: collect as usual (_cli/collector)
    return load(
        server=server,
        progress=live.progress,
        stop=live.stop,
        cluster=args.cluster,
        retries=args.retries or 0,
        **options,
    )


def sampled_server(args: argparse.Namespace) -> ListeningServer | None:
    """The server to sample beside the load: ``--server-pid``'s process tree, else the
    process listening on the target's port on this machine (``_servers.listening``);
    None with ``--server-pid 0``, a remote target, or no listener this user can see."""
    import psutil

    from pytest_netbench._input.target import is_loopback_literal, parse_host_port
    from pytest_netbench._servers.listening import (
        ListeningServer,
        find_listening_server,
        holds_this_process,
    )

    if args.command == "echo":
        host, port = parse_host_port(args.target)
    else:
        parsed = urllib.parse.urlsplit(args.url)
        host = parsed.hostname or ""
        port = parsed.port or (443 if parsed.scheme in ("https", "wss") else 80)
    pid: int | None = args.server_pid
    if pid == 0:
        return None
    if pid is not None:
        if pid < 0 or not psutil.pid_exists(pid):
            raise SpecError(f"--server-pid {pid}: no such process on this machine")
        if holds_this_process(pid):
            raise SpecError(
                f"--server-pid {pid}: this command runs inside that process tree, so its"
                " own work would be counted as the server's: give the server's own process"
            )
        return ListeningServer(pid, port)
    if host != "localhost" and not is_loopback_literal(host):
        return None  # another machine's server: nothing here to sample
    return find_listening_server(port)


def _profiled(args: argparse.Namespace) -> ListeningServer:
    """``--profile``: the server behind the target's port (or ``--server-pid``'s), whose
    process is profiled after the load."""
    server = sampled_server(args)
    if server is None:
        raise SpecError(
            "--profile profiles the server's process, and no process this user can see"
            " listens on the target's port: give it with --server-pid PID"
        )
    return server


def grpc_message(args: argparse.Namespace) -> bytes:
    """``netbench grpc``'s message: ``--message-hex`` decoded, ``--message-file`` read,
    ``--data`` (or ``--data-file``) JSON typed by ``--proto`` or the server's reflection,
    or none (an empty message)."""
    if args.proto and (args.message_hex is not None or args.message_file is not None):
        raise SpecError(
            "--proto types a JSON message (--data or --data-file); --message-hex and"
            " --message-file are the message's bytes already: give one or the other"
        )
    if args.message_hex is not None:
        try:
            return bytes.fromhex(args.message_hex)
        except ValueError:
            raise SpecError(
                f"--message-hex {args.message_hex!r} is not hex: give the message's bytes as"
                " pairs of hex digits (e.g. 0a0568656c6c6f), or use --message-file"
            ) from None
    if args.message_file is not None:
        try:
            return Path(args.message_file).read_bytes()
        except OSError as exc:
            raise SpecError(f"cannot read --message-file {args.message_file}: {exc}") from None
    data: str | None = args.data
    if args.data_file is not None:
        try:
            data = Path(args.data_file).read_text()
        except OSError as exc:
            raise SpecError(f"cannot read --data-file {args.data_file}: {exc}") from None
    if data is None:
        if args.proto:
            raise SpecError("--proto types a JSON message: give it with --data or --data-file")
        return b""
    from pytest_netbench._input.grpc_schema import grpc_message_from_json

    return grpc_message_from_json(
        args.grpc_method,
        data,
        proto=args.proto or (),
        import_paths=args.import_paths,
        url=args.url,
        allow_remote=bool(getattr(args, "allow_remote", False)),
        server_streaming=getattr(args, "stream", None) == "grpc",
    )
