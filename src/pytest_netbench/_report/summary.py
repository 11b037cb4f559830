"""One load's result as plain text, in the spirit of wrk and ab.

Used by the CLI (after a run) and by the pytest plugin (in a failing test's report). Every
section is a small function returning lines; :func:`format_result` joins them. Free text
(error samples, invalid reasons) is wrapped to ``width``; tables fit 80 columns.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING

from pytest_netbench._model import (
    ERROR_KINDS,
    LatencySummary,
    LoadResult,
    LoadSpec,
    ServerStats,
    why_no_latency,
)
from pytest_netbench._report.cells import format_bytes, format_count, format_ms
from pytest_netbench._report.checks import check_lines
from pytest_netbench._report.endings import ending_text
from pytest_netbench._report.phases import phase_lines
from pytest_netbench._report.profile import profile_lines
from pytest_netbench._report.sessions import flow_model, flow_target
from pytest_netbench._report.shares import share_lines
from pytest_netbench._report.stream_figures import stream_legend, stream_rows
from pytest_netbench._report.targets import describe_target

if TYPE_CHECKING:
    from pytest_netbench._experiment.slo import SloVerdict, TermCheck

_LATENCY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("p50", "p50_ms"),
    ("p75", "p75_ms"),
    ("p90", "p90_ms"),
    ("p95", "p95_ms"),
    ("p99", "p99_ms"),
    ("p99.9", "p999_ms"),
    ("max", "max_ms"),
    ("mean", "mean_ms"),
    ("stdev", "stdev_ms"),
)
_LABEL_WIDTH = 13
_CELL_WIDTH = 7
_SAMPLE_CHARS = 120  # error samples are hints, not logs: keep each to a line or two


def format_result(
    result: LoadResult, *, width: int = 80, thresholds: SloVerdict | None = None
) -> str:
    """The full text report of one load: throughput, latency table, errors, server,
    generator; ``thresholds`` (the CLI's ``--threshold``), each term with its value. A load
    in which nothing succeeded ends saying so, with the error kinds and a sample."""
    width = max(width, 40)
    lines: list[str] = []
    lines += _header(result, width)
    if not result.valid:
        lines += _invalid(result, width)
    lines += _throughput(result)
    lines += _latency(result)
    lines += phase_lines(result)
    lines += _streams(result)
    lines += _errors(result, width)
    lines += _status_codes(result, width)
    lines += check_lines(result)
    lines += _per_request(result, width)
    lines += _server(result, width)
    lines += profile_lines(result, width)
    lines += _generator(result, width)
    lines += share_lines(result, width)
    if thresholds is not None:
        lines += threshold_lines(thresholds, result)
    if not result.valid:
        # Repeated at the end: the last line is the one people read after a long report.
        lines += _invalid(result, width, details=False)
    if result.ok == 0:
        lines += ["", no_success_line(result)]
    return "\n".join(lines) + "\n"


def no_success_line(result: LoadResult) -> str:
    """``NO REQUEST SUCCEEDED: 50 of 50 requests were status errors, e.g. HTTP 404``: one
    line, never wrapped, so the last line of a report says it whole."""
    head, _, detail = why_no_latency(result).partition(": ")
    return f"{head.upper()}: {detail}"


def threshold_lines(verdict: SloVerdict, result: LoadResult) -> list[str]:
    """Every term with its value and whether it held, as k6 prints its thresholds, then a
    line saying how many failed."""
    width = max(len(check.term.text) for check in verdict.checks)
    lines = ["", "Thresholds"]
    for check in verdict.checks:
        mark = "ok" if check.passed else "FAILED"
        value = f"{check.term.metric} = {_threshold_value(check, result)}"
        lines.append(f"  {mark:<6}  {check.term.text:<{width}}  {value}")
    failed = verdict.failed
    if failed:
        names = ", ".join(check.term.text for check in failed)
        lines.append(f"THRESHOLDS FAILED: {len(failed)} of {len(verdict.checks)} ({names})")
    else:
        lines.append(f"Thresholds passed: {len(verdict.checks)} of {len(verdict.checks)}")
    return lines


def _threshold_value(check: TermCheck, result: LoadResult) -> str:
    if math.isnan(check.value) and result.ok == 0:
        return "n/a (no ok response)"
    if check.term.metric.startswith("window("):  # which window: ``(worst 2 s window: 3-5 s)``
        from pytest_netbench._model.windows import parse_window_metric

        seconds, figure = parse_window_metric(check.term.metric)
        return f"{check.value_text} ({result.window(seconds).worst(figure).describe()})"
    return check.value_text


def _unit_name(result: LoadResult) -> str:
    if result.spec is not None and result.spec.listen:
        return "pushes"  # a listen load counts what the server pushed (see listen_rules)
    if result.url.startswith("ws://") or (result.spec is not None and result.spec.kind == "ws"):
        return "messages"  # a WebSocket load counts message round trips
    is_tcp = result.url.startswith("tcp://") or (
        result.spec is not None and result.spec.kind == "echo"
    )
    return "exchanges" if is_tcp else "requests"


def _listening(spec: LoadSpec) -> str:
    """A listen load's header words: what it does, and where the pushes' stamps are."""
    words = "listening"
    if spec.stamp_field is not None:
        words += f", stamp in field {spec.stamp_field!r}"
    elif spec.stamp_binary:
        words += ", stamp in the first 8 bytes"
    if spec.ping_every_s is not None:
        words += f", a ping every {spec.ping_every_s:g} s"
    return words


def _connection_words(result: LoadResult, spec: LoadSpec) -> str:
    """How connections were used: keep-alive as asked, unless the server closed them (a
    gunicorn sync worker closes each: 4,897 opened for 4 in use), which the heading says."""
    if not spec.keepalive:
        return "new connection per request"
    opened = result.generator.connections_opened
    in_use = max(spec.connections, result.generator.connections_peak, 1)
    if opened > 2 * in_use and 2 * opened >= result.sent > 0:
        return f"keep-alive asked, but the server closed connections ({opened:,} opened)"
    return "keep-alive"


def _header(result: LoadResult, width: int) -> list[str]:
    spec = result.spec
    parts = [f"{result.mode} loop", f"{result.duration_s:.2f} s measured"]
    if spec is not None and result.sessions is not None:  # a flow: its model, not a loop's
        model = flow_model(spec)
        parts = [model[0], parts[1], *model[1:]]
        if spec.warmup_s:
            parts.append(f"warm-up {spec.warmup_s:g} s excluded")
        if spec.workers > 1:
            parts.append(f"{spec.workers} workers")
    elif spec is not None:
        stages = ", ".join(stage.text for stage in spec.stages)
        if spec.stages and spec.rate is not None:
            parts.append(f"stages {stages} from rate {format_count(spec.rate)}/s ({spec.arrival})")
        elif spec.stages:
            parts.append(f"stages {stages} from {spec.connections} connections")
        elif spec.rate is not None:
            parts.append(f"rate {format_count(spec.rate)}/s ({spec.arrival})")
        if not spec.stages or spec.rate is not None:
            parts.append(f"{spec.connections} connections")
        # protocol="auto": the version the server picked, said to be its pick.
        chosen = "TLS, negotiated by ALPN" if spec.protocol_negotiated else ""
        if spec.kind == "http" and spec.protocol == "h2":
            over = chosen or ("TLS" if spec.scheme == "https" else "h2c")
            streams = "stream" if spec.streams == 1 else "streams"
            parts.append(f"HTTP/2 ({over}), {spec.streams} {streams}/connection")
        elif spec.kind == "http":
            if chosen:
                parts.append(f"HTTP/1.1 ({chosen})")
            parts.append(_connection_words(result, spec))
            if spec.requests_per_connection:
                parts.append(f"{spec.requests_per_connection} requests/connection")
            if spec.pipeline > 1:
                parts.append(f"pipeline {spec.pipeline}")
        elif spec.kind == "ws" and spec.listen:
            parts.append(_listening(spec))
        elif spec.kind == "ws":
            kind = "binary" if spec.binary else "text"
            parts.append(f"{format_bytes(len(spec.payload))} {kind} messages")
            if spec.answer == "id":
                parts.append(f"answers by id ({spec.id_field!r})")
                if spec.pipeline > 1:
                    parts.append(f"pipeline {spec.pipeline}")
            elif spec.answer == "any":
                parts.append("any message answers")
            if spec.subprotocols:
                parts.append(f"subprotocols {', '.join(spec.subprotocols)}")
        else:
            parts.append(f"{format_bytes(len(spec.payload))} payload")
        if spec.warmup_s:
            parts.append(f"warm-up {spec.warmup_s:g} s excluded")
        if spec.workers > 1:
            parts.append(f"{spec.workers} workers")
    elif result.generator.connections_peak:
        parts.append(f"{result.generator.connections_peak} connections (peak)")
    lines = textwrap.wrap(
        _target(result),
        width,
        subsequent_indent="  ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    lines += textwrap.wrap(
        ", ".join(parts), width, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False
    )
    ended = ending_text(result)  # an end before the one asked for, not an error
    lines += textwrap.wrap(ended, width, initial_indent="  ", subsequent_indent="    ")
    return lines


def _target(result: LoadResult) -> str:
    spec = result.spec
    if result.sessions is not None:
        return flow_target(result)
    return f"Target: {describe_target(spec) if spec is not None else result.url}"


def _invalid(result: LoadResult, width: int, *, details: bool = True) -> list[str]:
    """``INVALID: reasons -- these figures cannot be trusted``, one paragraph of each
    reason's first line; the further lines of a reason (a dead server's command and log
    tail) follow as lines, never run together. ``details=False``: the paragraph only."""
    firsts = [reason.split("\n", 1)[0] for reason in result.invalid_reasons]
    reasons = "; ".join(firsts) or "no reason recorded"
    text = f"INVALID: {reasons} -- these figures cannot be trusted"
    lines = ["", *textwrap.wrap(text, width, subsequent_indent="    ")]
    more = [line for reason in result.invalid_reasons for line in reason.splitlines()[1:]]
    if more and not details:
        lines[-1] += " (details above)"
    elif more:
        for line in more:
            lines += textwrap.wrap(
                line, width, initial_indent="    ", subsequent_indent="      "
            ) or [""]
    return lines


def _throughput(result: LoadResult) -> list[str]:
    unit = _unit_name(result)
    seconds = result.duration_s if result.duration_s > 0 else math.nan
    lines = ["", "Throughput"]
    rate = f"{result.rps:,.1f}"
    if len(result.timeline) >= 2:
        rate += f"  (stdev {result.rps_stdev:,.1f} over {len(result.timeline)} one-second rows)"
    lines.append(f"  {unit.capitalize()}/sec:".ljust(18) + rate)
    if not math.isnan(seconds):
        read = format_bytes(result.bytes_read / seconds)
        written = format_bytes(result.bytes_written / seconds)
        lines.append("  Transfer/sec:".ljust(18) + f"{read} read, {written} written")
    lines.append(
        f"  {unit.capitalize()}:".ljust(18)
        + f"{result.sent:,} sent, {result.ok:,} ok, {result.errors_total:,} errors, "
        f"{result.in_flight:,} in flight"
    )
    lines.append(
        "  Bytes:".ljust(18)
        + f"{format_bytes(result.bytes_read)} read, {format_bytes(result.bytes_written)} written"
    )
    return lines


def _latency_row(label: str, summary: LatencySummary) -> str:
    cells = "".join(
        format_ms(getattr(summary, attr)).rjust(_CELL_WIDTH) for _, attr in _LATENCY_COLUMNS
    )
    return f"  {label}".ljust(_LABEL_WIDTH) + cells


def _latency(result: LoadResult) -> list[str]:
    heading = "".join(name.rjust(_CELL_WIDTH) for name, _ in _LATENCY_COLUMNS)
    lower_bounds = result.generator.lower_bounds  # open loop: see GeneratorStats
    unit = _unit_name(result)
    answers = {"messages": "echoes", "pushes": "pushes"}.get(unit, "responses")
    if unit == "messages" and result.spec is not None and result.spec.answer != "echo":
        answers = "answers"
    title = f"Latency (ms) of {result.latency.count - lower_bounds:,} ok {answers}"
    if unit == "pushes" and result.spec is not None:
        stamped = result.spec.stamp_field is not None or result.spec.stamp_binary
        title += ", from stamp to arrival" if stamped else ", waits since the last push"
    bounds = f"{lower_bounds:,} lower bound" + ("" if lower_bounds == 1 else "s")
    if lower_bounds:
        title += f" and {bounds}"
    lines = ["", title, "".ljust(_LABEL_WIDTH) + heading]
    if result.latency.count == 0:
        lines.append("  (no ok responses: no latency figures)")
        return lines
    if result.mode == "open" and result.uncorrected is not None:
        lines.append(_latency_row("corrected", result.latency))
        lines.append(_latency_row("uncorrected", result.uncorrected))
        lines.append("  (corrected = from the intended send time; the pXX_ms fields use it)")
        if lower_bounds:
            lines += textwrap.wrap(
                f"(the corrected samples include {bounds}: requests still unanswered when"
                " the run ended, in flight or never sent, each counted from its intended"
                " send to that end; the true percentiles can only be higher)",
                78,
                initial_indent="  ",
                subsequent_indent="   ",
            )
    else:
        lines.append(_latency_row("all", result.latency))
    probe = result.probe
    if probe is not None:
        every = f"{probe.every_s * 1000:g} ms" if probe.every_s < 1 else f"{probe.every_s:g} s"
        if probe.ok:
            lines.append(_latency_row("one more", probe.latency))
        failed = f", {probe.errors_total:,} failed" if probe.errors_total else ""
        listening = result.spec is not None and result.spec.listen
        did = "waited for a first push" if listening else "made one exchange"
        lines += textwrap.wrap(
            f"(one more = a client that connected, {did} and left, every"
            f" {every}: {probe.ok:,} ok{failed})",
            78,
            initial_indent="  ",
            subsequent_indent="   ",
        )
    return lines


_STREAM_WORDS = {
    "sse": "server-sent events",
    "chunks": "chunks of the body",
    "openai": "OpenAI-compatible token streams",
    "grpc": "gRPC server streaming, each message an event",
    "ws": "WebSocket pushes, each held connection a stream",
}


def _streams(result: LoadResult) -> list[str]:
    """A streaming load's figures: events, their rate, and first byte, first event, gap
    and whole stream as latency rows (``LoadResult.stream``)."""
    stream = result.stream
    if stream is None:
        return []
    words = _STREAM_WORDS.get(stream.mode, stream.mode)
    heading = "".join(name.rjust(_CELL_WIDTH) for name, _ in _LATENCY_COLUMNS)
    lines = [
        "",
        f"Streams ({words}): {stream.streams:,} streams, {stream.events:,} events,"
        f" {stream.events_per_second:,.1f} events/sec",
        "".ljust(_LABEL_WIDTH) + heading,
    ]
    openai = stream.mode == "openai"
    lines += [_latency_row(label, summary) for label, summary in stream_rows(stream)]
    if openai:
        lines.append(
            f"  output tokens: {stream.output_tokens:,},"
            f" {stream.output_tokens_per_second:,.1f} tokens/sec"
        )
    if not math.isnan(stream.goodput):
        slo = result.spec.goodput if result.spec is not None else ()
        bounds = ", ".join(f"{name} <= {ms:g} ms" for name, ms in slo) or "its SLO"
        lines.append(
            f"  goodput: {stream.goodput:,.1f} streams/sec met {bounds}"
            f" ({stream.good_streams:,} of {result.ok:,} ok streams)"
        )
    counts = stream.events_per_stream
    if counts.streams:
        lines.append(
            f"  events a stream: min {counts.min:,}, p50 {counts.p50:,},"
            f" mean {counts.mean:,.1f}, max {counts.max:,}"
        )
    legend = stream_legend(stream, open_loop=result.mode == "open")
    lines += [f"  {'(' if i == 0 else ' '}{line}" for i, line in enumerate(legend)]
    lines[-1] += ")"
    return lines


def _errors(result: LoadResult, width: int) -> list[str]:
    if result.errors_total == 0:
        return ["", "Errors: none"]
    counts = "  ".join(f"{kind} {result.errors.get(kind, 0):,}" for kind in ERROR_KINDS)
    extra = sorted(set(result.errors) - set(ERROR_KINDS))
    if extra:
        counts += "  " + "  ".join(f"{kind} {result.errors[kind]:,}" for kind in extra)
    lines = ["", f"Errors: {result.errors_total:,} total"]
    lines += textwrap.wrap(counts, width, initial_indent="  ", subsequent_indent="  ")
    for kind, sample in sorted(result.error_samples.items()):
        short = " ".join(sample.split())
        if len(short) > _SAMPLE_CHARS:
            short = short[: _SAMPLE_CHARS - 3] + "..."
        lines += textwrap.wrap(
            f"e.g. {kind}: {short}", width, initial_indent="  ", subsequent_indent="      "
        )
    return lines


def _status_codes(result: LoadResult, width: int) -> list[str]:
    if not result.status_codes:
        return []
    codes = sorted(result.status_codes.items())
    spec = result.spec
    if spec is not None and spec.grpc_method is not None:
        # grpc-status codes, named (an answer that was not HTTP 200 keeps its HTTP status).
        from pytest_netbench._model.grpc_status import status_name

        text = ", ".join(
            f"{status_name(code) if code < 100 else f'HTTP {code}'}: {n:,}" for code, n in codes
        )
        return textwrap.wrap(f"grpc-status: {text}", width, subsequent_indent="  ")
    text = ", ".join(f"{code}: {n:,}" for code, n in codes)
    return textwrap.wrap(f"Status codes: {text}", width, subsequent_indent="  ")


def _per_request(result: LoadResult, width: int) -> list[str]:
    if not result.by_request:  # a mix's table only: a load without one imports none of it
        return []
    from pytest_netbench._report.requests import request_lines

    table = request_lines(result, width)
    if not table:
        return []
    return ["", "Per request (latency in ms of each kind's ok responses)", *table]


def _server(result: LoadResult, width: int) -> list[str]:
    lines: list[str] = []
    if result.server is not None:
        lines += _server_block(f"Server (pid {result.server.pid})", result.server, width)
    if result.backend is not None:
        lines += _server_block(f"Backend (pid {result.backend.pid})", result.backend, width)
    return lines


def _server_block(title: str, srv: ServerStats, width: int) -> list[str]:
    per_request = "-" if math.isnan(srv.cpu_ms_per_request) else f"{srv.cpu_ms_per_request:.3f} ms"
    waited = ""
    if not math.isnan(srv.cpu_wait_s):
        share = srv.cpu_wait_share
        waited = f", waited for a CPU {srv.cpu_wait_s:.2f} s"
        waited += f" ({share:.0%} of the time it wanted one)" if not math.isnan(share) else ""
    first = (
        f"cpu {srv.cpu_s:.2f} s (user {srv.cpu_user_s:.2f} + sys {srv.cpu_system_s:.2f})"
        f"{waited}, {per_request} cpu per request, peak RSS {srv.rss_peak_mb:.1f} MB"
    )
    second = (
        f"processes {srv.processes_peak}, threads {srv.threads_peak}, fds {srv.fds_peak}, "
        f"sockets established {srv.sockets_established_peak}, "
        f"TIME_WAIT {srv.sockets_time_wait_peak}, context switches "
        f"{srv.ctx_switches_voluntary:,} voluntary / {srv.ctx_switches_involuntary:,} "
        f"involuntary ({srv.samples} samples)"
    )
    host = (
        f"whole host: TCP sockets in use {srv.host_sockets_in_use_peak:,} (peak), in"
        f" TIME_WAIT {srv.host_sockets_time_wait_peak:,} (peak)"
    )
    lines = ["", title]
    for text in (first, second, _cpus_line(srv), host):
        if not text:
            continue
        lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ")
    return lines


def _cpus_line(srv: ServerStats) -> str:
    """Its CPUs, how many of its threads wanted them at once, and what others took."""
    if not srv.cpus:
        return ""
    cores = ",".join(map(str, srv.cpus))
    text = f"cpus {cores}"
    if not math.isnan(srv.runnable_per_core):
        text += f": {srv.runnable_per_core:.2f} runnable threads per core (its own queueing)"
    if not math.isnan(srv.host_other_cpu_s):
        text += (
            f"; other processes ran {srv.host_other_cpu_s:.2f} s on them"
            f" ({srv.host_other_share:.0%}), about {srv.contended_wait_s:.2f} s of its wait"
            " behind them"
        )
    return text


def _generator(result: LoadResult, width: int) -> list[str]:
    gen = result.generator
    workers = f"{gen.workers} worker" + ("s" if gen.workers != 1 else "")
    loop = f" on {gen.loop}" if gen.loop else ""
    text = (
        f"{workers}{loop}, cpu {gen.cpu_s:.2f} s ({gen.cpu_percent:.0f}%), "
        f"connections opened {gen.connections_opened:,} (peak {gen.connections_peak:,})"
    )
    lines = ["", "Generator"]
    lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ")
    if gen.intended_rate is not None or result.mode == "open":
        intended = "-" if gen.intended_rate is None else f"{gen.intended_rate:,.1f}/s"
        achieved = "-" if gen.achieved_rate is None else f"{gen.achieved_rate:,.1f}/s"
        lag_p99 = "-" if gen.send_lag_p99_ms is None else format_ms(gen.send_lag_p99_ms) + " ms"
        lag_max = "-" if gen.send_lag_max_ms is None else format_ms(gen.send_lag_max_ms) + " ms"
        open_text = (
            f"open loop: intended {intended}, achieved {achieved}, send lag p99 {lag_p99}, "
            f"max {lag_max}, late sends {gen.late_sends:,}, unsent {gen.unsent:,}"
        )
        if gen.sent_after_window:
            open_text += f", sent after the window {gen.sent_after_window:,}"
        lines += textwrap.wrap(open_text, width, initial_indent="  ", subsequent_indent="    ")
    for text in (*_connect_phase(result), *gen.notes):
        lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ")
    return lines


def _connect_phase(result: LoadResult) -> list[str]:
    """How opening the connections before the window went, and the host's SYN overflows."""
    gen = result.generator
    texts = []
    if gen.connect_first:
        wanted = result.spec.connections if result.spec is not None else gen.connections_ready
        took = f" in {gen.connect_s:.2f} s" if gen.connect_s is not None else ""
        text = f"before the window: {gen.connections_ready:,} of {wanted:,} connections open{took}"
        if gen.connect_p50_ms is not None:
            text += (
                f", connect p50 {format_ms(gen.connect_p50_ms)} ms,"
                f" p99 {format_ms(gen.connect_p99_ms or 0.0)} ms,"
                f" max {format_ms(gen.connect_max_ms or 0.0)} ms"
            )
        if gen.connect_failures:
            text += f"; {gen.connect_failures:,} failed ({gen.connect_failure_sample})"
        texts.append(text)
    if gen.connections_without_exchange is not None:
        texts.append(
            f"connections that completed no exchange: {gen.connections_without_exchange:,}"
        )
    if gen.listen_overflows:
        texts.append(
            f"accept queue overflows on this host during the load: {gen.listen_overflows:,}"
            " (ListenOverflows: connects dropped at a full backlog, retried after 1 s)"
        )
    return texts
