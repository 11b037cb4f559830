"""What each metric of a :class:`~pytest_netbench.LoadResult` means to a comparison.

A metric is named by its path in the result (``rps``, ``p99_ms``, ``server.cpu_s``,
``errors.reset``, ``status_codes.404``, and one request kind of a mix's figures:
``by_request.search.p99_ms``). Matrices mark the best value with it, the gate decides which way is
worse with it, and the plugin checks ``--netbench-metrics`` with it; so the meaning lives
here, beside the model, and nowhere else.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._model import (
    ERROR_KINDS,
    PHASE_NAMES,
    CheckStats,
    LatencySummary,
    LoadResult,
    RequestStats,
    ServerStats,
    SessionStats,
)
from pytest_netbench._model.streams import StreamStats
from pytest_netbench._model.windows import LOWER_IS_WORSE, parse_window_metric
from pytest_netbench._public import publish

DEFAULT_METRICS: tuple[str, ...] = ("rps", "p99_ms")
# Figures of an experiment rather than of one load: metric -> (experiment kind, field of
# its to_dict()). ``capacity`` is the highest rate that met the SLO, None when unknown; a
# cold start's first-second rate over its steady rate, and when it settled (None: never).
EXPERIMENT_METRICS: Mapping[str, tuple[str, str]] = {
    "capacity": ("capacity", "rate"),
    "first_second_ratio": ("cold_start", "first_second_ratio"),
    "settle_s": ("cold_start", "settle_s"),
}
# Metrics where a larger number is the better outcome; every other metric (latencies,
# errors, CPU, memory, spread) is better when smaller.
_HIGHER_IS_BETTER = frozenset(
    {
        "rps",
        "ok",
        "sent",
        "bytes_read",
        "bytes_written",
        "mib_read_per_s",
        "mib_written_per_s",
        "generator.achieved_rate",
        "sessions.started",
        "sessions.completed",
        "capacity",
        "first_second_ratio",
        "stream.events",
        "stream.events_per_second",
        "stream.streams",
        "stream.good_streams",
        "stream.goodput",
    }
)


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is the better outcome (``rps``: yes;
    latencies, errors, CPU, memory: no). A request kind's figure
    (``by_request.search.rps``) goes the way the load's own figure of that name goes. A
    status code's count goes up when more answers succeed (``status_codes.200``) and down
    for an error's (``status_codes.503``)."""
    if metric.startswith("window("):  # a window's ok and rps: more is better
        return metric.rsplit(".", 1)[-1] in LOWER_IS_WORSE
    if metric.startswith("checks."):  # a check's pass rate and passes: more is better
        return metric.rsplit(".", 1)[-1] in ("rate", "passes", "total")
    own = own_metric(metric)
    group, _, code = own.partition(".")
    if group == "status_codes" and code.isdigit():
        return int(code) < 400  # 4xx and 5xx count under errors["status"]
    return own in _HIGHER_IS_BETTER


def own_metric(metric: str) -> str:
    """The load-wide metric a request kind's figure corresponds to
    (``by_request.search.p99_ms`` -> ``p99_ms``); any other metric unchanged."""
    split = split_request_metric(metric)
    return metric if split is None else split[1]


def request_name(metric: str) -> str | None:
    """The request kind a metric is about (``by_request.search.p99_ms`` -> ``search``),
    None for a load-wide metric."""
    split = split_request_metric(metric)
    return None if split is None else split[0]


# A metric as the SLO and gate parsers read it: a dotted name, or a request kind's figure,
# whose NAME may hold spaces, slashes and dots as a mix's default names do
# (``by_request.GET /items.json.p99_ms``). A parser anchors what follows it.
METRIC_PATTERN = r"(?:by_request\.[^,]+?|checks\.[^,]+?|window\([^)]*\)\.\w+|[A-Za-z_][\w.]*)"
_REQUEST_PREFIX = "by_request."
# Groups of a request kind's figures, named by two parts (errors.reset, status_codes.404).
_FIGURE_GROUPS = ("errors", "status_codes", "latency")


def split_request_metric(metric: str, names: Iterable[str] | None = None) -> tuple[str, str] | None:
    """``by_request.NAME.FIGURE`` -> ``(NAME, FIGURE)``; None for any other metric, or one
    naming no figure. NAME may hold dots (``GET /items.json``): with the load's request
    ``names`` the longest that fits is taken; without them FIGURE is the last part, or the
    last two for a figure inside a group (``errors.reset``, ``status_codes.404``)."""
    if not metric.startswith(_REQUEST_PREFIX):
        return None
    rest = metric[len(_REQUEST_PREFIX) :]
    fitting = [n for n in names or () if rest.startswith(f"{n}.") and len(rest) > len(n) + 1]
    if fitting:
        name = max(fitting, key=len)
        return name, rest[len(name) + 1 :]
    for phase in PHASE_NAMES:  # a kind's phase: by_request.NAME.phases.wait.p99_ms
        at = rest.rfind(f".phases.{phase}.")
        if at > 0 and "." not in rest[at + len(phase) + 9 :]:
            return rest[:at], rest[at + 1 :]
    head, dot, last = rest.rpartition(".")
    if not dot or not head:
        return None
    inner, dot, group = head.rpartition(".")
    # errors.KIND, status_codes.N, latency.X; but a kind named "x.errors" keeps p99_ms whole.
    grouped = group == "latency" or (group in _FIGURE_GROUPS and last not in REQUEST_METRICS)
    if dot and inner and grouped:
        return inner, f"{group}.{last}"
    return head, last


_CHECK_PREFIX = "checks."
# The figures of one check (``checks.NAME.<figure>``): its pass rate first.
CHECK_METRICS: tuple[str, ...] = ("rate", "passes", "failures", "total")


def split_check_metric(metric: str) -> tuple[str, str]:
    """``checks.NAME.FIGURE`` -> ``(NAME, FIGURE)``: FIGURE one of :data:`CHECK_METRICS`,
    NAME all before it (a check's name may hold dots and spaces)."""
    name, dot, figure = metric[len(_CHECK_PREFIX) :].strip().rpartition(".")
    if not dot or not name or figure not in CHECK_METRICS:
        raise SpecError(
            f"metric {metric!r}: name a check and one of its figures, as checks.NAME.rate;"
            f" a check's figures: {', '.join(CHECK_METRICS)}"
        )
    return name, figure


class UnknownRequestError(SpecError):
    """A ``by_request.NAME...`` metric of a load (or spec) with no request kind ``NAME``:
    the message names the kinds it has. ``name``: the missing kind."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def metric_value(result: LoadResult, metric: str) -> float:
    """A numeric figure of a result by name: ``rps``, ``p99_ms``, ``server.cpu_s``,
    ``errors.reset``, ``status_codes.404``, ``by_request.search.p99_ms``. Missing parts (no
    server stats) give nan; an error kind or status code that did not occur gives 0.

    Raises AttributeError for a name the result does not have, UnknownRequestError (a
    SpecError) for a request kind the load did not send, naming the ones it did, and
    SpecError for an unknown error kind or a name that is not a number.
    """
    value = _walk(result, metric)
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"metric {metric!r} is not a number (got {type(value).__name__})")
    return float(value)


def _walk(result: LoadResult, metric: str) -> object:
    """The part of a result a metric names, whatever it is (None past a missing part)."""
    if metric.startswith("window("):  # the worst window's figure (``window(5s).p99_ms``)
        seconds, figure = parse_window_metric(metric)
        return result.window(seconds).worst(figure).value
    if metric.startswith(_CHECK_PREFIX):  # a check's name is one part, dots and spaces too
        name, figure = split_check_metric(metric)
        check = _entry(result.checks, "checks", name, metric)
        return _walk_parts(check, figure, ["checks", name], metric)
    split = split_request_metric(metric, result.by_request)
    if split is not None:  # a request kind's name is one part, dots and all
        name, figure = split
        kind = _entry(result.by_request, "by_request", name, metric)
        return _walk_parts(kind, figure, ["by_request", name], metric)
    return _walk_parts(result, metric, [], metric)


def _walk_parts(start: object, parts: str, path: list[str], metric: str) -> object:
    value = start
    for part in parts.split("."):
        if value is None:
            return None
        if isinstance(value, Mapping):
            value = _entry(value, ".".join(path), part, metric)
        else:
            value = getattr(value, part)
        path.append(part)
    return value


def _entry(mapping: Mapping[Any, object], where: str, key: str, metric: str) -> object:
    """One entry of a mapping in a result, strictly: an error kind that did not occur or a
    status code not seen reads 0, but an unknown error kind, a code that is no number or a
    request kind the load did not send is an error naming the valid ones."""
    if where in ("status_codes", "by_request.status_codes") or where.endswith(".status_codes"):
        try:
            code = int(key)
        except ValueError:
            raise SpecError(
                f"metric {metric!r}: status code {key!r} is not a number; name one as"
                " status_codes.404"
            ) from None
        return mapping.get(code, 0)
    if where == "errors" or where.endswith(".errors"):
        if key not in ERROR_KINDS and key not in mapping:
            raise SpecError(
                f"metric {metric!r}: unknown error kind {key!r}; the kinds are"
                f" {', '.join(ERROR_KINDS)}"
            )
        return mapping.get(key, 0)
    if key in mapping:
        return mapping[key]
    if where in _SESSION_COUNTS:
        return 0  # no session failed at that step (or of that kind, or ran that flow)
    if where == "checks":
        names = ", ".join(str(n) for n in mapping) or "none (it had no checks=)"
        raise SpecError(
            f"metric {metric!r}: the load has no check named {key!r}; its checks: {names}"
        )
    if where == "by_request":
        names = ", ".join(str(n) for n in mapping) or "none (it sent no request mix)"
        raise UnknownRequestError(
            f"metric {metric!r}: the load has no request named {key!r}; its requests: {names}",
            key,
        )
    valid = ", ".join(str(k) for k in mapping) or "none"
    raise SpecError(f"metric {metric!r}: no entry {key!r} in {where}; it has {valid}")


# A user flow's session counts by step, failure kind and flow: one not seen reads 0.
_SESSION_COUNTS = frozenset({"sessions.failed_at", "sessions.failure_kinds", "sessions.by_flow"})


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_count(metric: str) -> bool:
    """Whether a load's metric counts things (``errors_total``, ``errors.timeout``,
    ``in_flight``, ``server.fds_peak``, ``by_request.search.ok``): a whole number, so a
    limit on it needs no unit."""
    if metric in EXPERIMENT_METRICS:
        return False
    if metric.startswith("window("):
        return metric.rsplit(".", 1)[-1] in ("ok", "errors_total")
    try:
        value = _walk(_probe_for(metric), metric)
    except (AttributeError, SpecError):
        return False
    return isinstance(value, int) and not isinstance(value, bool)


def _not_a_number(name: str) -> str:
    """What to name instead of a part of the result that is no number: the figures in it
    (``latency`` -> ``latency.p99_ms``, and ``p99_ms`` when the result has it too)."""
    value = _walk(_PROBE_RESULT, name)
    kind = type(value).__name__
    if isinstance(value, Mapping):
        totals = [a for a in _numbers(_PROBE_RESULT) if a.startswith(f"{name}_")]
        example = _MAPPING_EXAMPLES.get(name, f"{name}.KEY")
        also = f", or {' or '.join(totals)}" if totals else ""
        return (
            f"metric {name!r} is not a number but a mapping ({kind}): name one entry,"
            f" e.g. {example}{also}"
        )
    inside = _numbers(value)
    if not inside or isinstance(value, str | tuple | list):
        return (
            f"metric {name!r} is not a number ({kind}); numeric metrics include rps, p50_ms,"
            " p99_ms, errors_total, server.cpu_ms_per_request"
        )
    same = [a for a in inside if a in set(_numbers(_PROBE_RESULT))]
    # The figure a user most likely means, else the first by name.
    first = next((a for a in _PREFERRED_EXAMPLES if a in inside), (same or inside)[0])
    example = f"{name}.{first} or {first}" if first in same else f"{name}.{first}"
    return (
        f"metric {name!r} is not a number but a group of figures ({kind}): name one, e.g."
        f" {example}; it holds {', '.join(f'{name}.{a}' for a in inside)}"
    )


# How to name one entry of a mapping in a result.
_MAPPING_EXAMPLES: Mapping[str, str] = {
    "errors": "errors.timeout",
    "by_request": "by_request.NAME.p99_ms",
}


_PREFERRED_EXAMPLES = ("p99_ms", "cpu_ms_per_request")


def _numbers(value: object) -> list[str]:
    """The public numeric attributes of an object (none of a number or a string)."""
    if value is None or _is_number(value) or isinstance(value, str):
        return []
    names = []
    for attribute in dir(value):
        if attribute.startswith("_"):
            continue
        try:
            if _is_number(getattr(value, attribute)):
                names.append(attribute)
        except (AttributeError, TypeError, ValueError):
            continue
    return names


def experiment_metric_value(kind: str, data: Mapping[str, object], metric: str) -> float:
    """An experiment's figure by name (``capacity``) from its ``to_dict()``: nan when the
    experiment is of another kind or did not find it (an unknown capacity is no number)."""
    wanted_kind, field_name = EXPERIMENT_METRICS[metric]
    value = data.get(field_name) if kind == wanted_kind else None
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def check_gate_metric(name: str) -> str:
    """A metric a threshold may name: a load's (``p99_ms``) or an experiment's
    (``capacity``)."""
    if name in EXPERIMENT_METRICS:
        return name
    try:
        return check_metrics([name])[0]
    except SpecError as exc:
        if not str(exc).startswith("unknown metric"):
            raise  # a part of a load's result, not a number: the message says what to name
        raise SpecError(f"{exc}; or an experiment's: {', '.join(EXPERIMENT_METRICS)}") from None


def check_metrics(
    metrics: Iterable[str], *, requests: Iterable[str] | None = None
) -> tuple[str, ...]:
    """Validate metric names against LoadResult; raise SpecError naming the bad one.

    ``by_request.NAME.METRIC`` is checked for its shape (METRIC a figure of one request
    kind) and, when ``requests`` gives the request kinds of the load (a mix's names), for
    NAME too: an UnknownRequestError naming the kinds there are."""
    names = tuple(m.strip() for m in metrics if m.strip())
    if not names:
        raise SpecError("no metrics given; use names like rps,p99_ms,errors_total")
    for name in names:
        if name.startswith("window("):
            parse_window_metric(name)  # whether the rows fit it is known once the load ran
            continue
        if name.startswith(_CHECK_PREFIX):
            split_check_metric(name)  # the check's name is known once the load has run
            continue
        if name.split(".", 1)[0] == "by_request":
            _check_request_metric(name, None if requests is None else tuple(requests))
            continue
        try:
            metric_value(_PROBE_RESULT, name)
        except AttributeError as exc:
            # LoadResult's own message may end "; did you mean 'p99_ms'?".
            _, _, advice = str(exc).partition("; ")
            hint = f" ({advice})" if advice else ""
            raise SpecError(
                f"unknown metric {name!r}{hint}; use a LoadResult attribute such as rps, p50_ms, "
                "p99_ms, p999_ms, max_ms, mean_ms, errors_total, in_flight, rps_stdev, "
                "server.cpu_ms_per_request or errors.<kind>"
            ) from None
        except SpecError as exc:
            if not str(exc).startswith(f"metric {name!r} is not a number"):
                raise  # an unknown error kind, a status code that is no number: says so
            raise SpecError(_not_a_number(name)) from None
    return names


def _check_request_metric(name: str, requests: tuple[str, ...] | None) -> None:
    """``by_request.NAME.METRIC``: METRIC one of a request kind's figures; NAME one of
    ``requests`` when they are known."""
    split = split_request_metric(name, requests)
    figures = ", ".join(REQUEST_METRICS)
    if split is None:
        raise SpecError(
            f"metric {name!r}: name a request kind and one of its figures, as"
            f" by_request.NAME.p99_ms; a kind's figures: {figures}, errors.<kind>,"
            " status_codes.<code>"
        )
    request, figure = split
    probe = _probe_for(name)
    try:
        metric_value(probe, name)
    except AttributeError:
        raise SpecError(
            f"unknown metric {name!r}: {figure!r} is no figure of a request kind; use one of"
            f" {figures}, errors.<kind> or status_codes.<code>"
        ) from None
    except UnknownRequestError:
        raise
    except SpecError as exc:
        if "is not a number" in str(exc) and "status code" not in str(exc):
            raise SpecError(
                f"metric {name!r} is not a number; a request kind's figures: {figures},"
                " errors.<kind>, status_codes.<code>"
            ) from None
        raise
    if requests is not None and request not in requests:
        there = ", ".join(requests) or "none (it sends no request mix)"
        raise UnknownRequestError(
            f"metric {name!r}: the load has no request named {request!r}; its requests: {there}",
            request,
        )


# The numeric figures of one request kind (``by_request.NAME.<figure>``).
REQUEST_METRICS: tuple[str, ...] = (
    "ok",
    "sent",
    "errors_total",
    "in_flight",
    "rps",
    "p50_ms",
    "p75_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    "mean_ms",
    "stdev_ms",
    "duration_s",
)


def _probe_for(metric: str) -> LoadResult:
    """A result to check a metric's shape on: for ``by_request.NAME...`` one that sent
    request kind NAME."""
    if metric.startswith(_CHECK_PREFIX):
        try:
            check, _ = split_check_metric(metric)
        except SpecError:
            return _PROBE_RESULT
        return replace(_PROBE_RESULT, checks={check: CheckStats(check, check, 0, 0)})
    name = request_name(metric)
    if name is None:
        return _PROBE_RESULT
    stats = RequestStats(
        name=name,
        method="GET",
        path="/",
        duration_s=1.0,
        sent=1,
        ok=1,
        errors={},
        in_flight=0,
        status_codes={},
        latency=LatencySummary(),
    )
    return replace(_PROBE_RESULT, by_request={name: stats})


_PROBE_RESULT = LoadResult(
    mode="closed",
    url="http://127.0.0.1/",
    duration_s=1.0,
    sent=0,
    ok=0,
    errors={},
    in_flight=0,
    status_codes={},
    bytes_read=0,
    bytes_written=0,
    latency=LatencySummary(),
    server=ServerStats(pid=0),  # present so typos in "server.<name>" are caught
    # present so typos in "sessions.<name>" are caught (a user flow's figures)
    sessions=SessionStats(users=0, started=0, completed=0, failed=0, in_progress=0),
    # present so typos in "stream.<name>" are caught (a streaming load's figures)
    stream=StreamStats("sse", 0, 0, 0.0, *(LatencySummary(),) * 4),
)


publish(globals())
