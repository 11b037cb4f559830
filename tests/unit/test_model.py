"""The public result model: JSON round trip, percentile(q), derived views, frozen-ness."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle
import random
from typing import Any

import pytest

from pytest_netbench import (
    ERROR_KINDS,
    LatencySummary,
    LoadResult,
    LoadSpec,
    ServerStats,
    TimelineRow,
)
from pytest_netbench._stats.merge import merge_outcomes
from pytest_netbench._stats.recorder import Recorder

NS = 1_000_000_000


def built_result(*, open_loop: bool = False, server: ServerStats | None = None) -> LoadResult:
    """A result made the way the engine makes one: a real Recorder, ticks, a merge."""
    spec = LoadSpec(
        kind="http",
        host="127.0.0.1",
        port=8080,
        duration_s=2.0,
        rate=500.0 if open_loop else None,
        headers=(("X-A", "b"),),
        body=b"abc",
    )
    rng = random.Random(3)
    rec = Recorder(0, open_loop=open_loop)
    for _second in range(2):
        for _ in range(300):
            value = int(rng.lognormvariate(14, 0.8))
            rec.latencies.append(value)
            if open_loop:
                rec.uncorrected.append(value // 2)
                rec.lags.append(1000)
        rec.status_codes[200] = rec.status_codes.get(200, 0) + 300
        rec.error("status", "HTTP 503")
        rec.status_codes[503] = rec.status_codes.get(503, 0) + 1
        rec.tick()
    rec.sent = 605
    rec.bytes_read, rec.bytes_written = 12345, 6789
    outcome = rec.finish(in_flight=3, window_end_ns=2 * NS)
    outcome.cpu_s, outcome.busy_s = 0.2, 0.3
    outcome.loop = "uvloop"
    return merge_outcomes(spec, [outcome], server)


SERVER = ServerStats(
    pid=1234,
    processes_peak=2,
    cpu_user_s=0.5,
    cpu_system_s=0.25,
    cpu_ms_per_request=1.25,
    rss_peak_mb=42.0,
    threads_peak=3,
    fds_peak=20,
    samples=10,
)


def through_json(result: LoadResult) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    return data


@pytest.mark.parametrize("open_loop", [False, True])
def test_to_dict_from_dict_round_trip(open_loop: bool) -> None:
    result = built_result(open_loop=open_loop, server=SERVER)
    data = through_json(result)
    back = LoadResult.from_dict(data)
    assert back == dataclasses.replace(result, spec=None)
    assert back.latency_histogram == result.latency_histogram
    assert back.to_dict() == {**data, "spec": None}
    for q in (50, 99, 99.9):
        assert back.percentile(q) == result.percentile(q)


def test_round_trip_keeps_nan_figures_as_nan() -> None:
    empty = LoadResult(
        mode="closed",
        url="http://127.0.0.1:1/",
        duration_s=0.0,
        sent=2,
        ok=0,
        errors=dict.fromkeys(ERROR_KINDS, 0) | {"connect": 2},
        in_flight=0,
        status_codes={},
        bytes_read=0,
        bytes_written=0,
        latency=LatencySummary(),  # no ok response: every figure NaN
        server=ServerStats(pid=1),
    )
    data = through_json(empty)  # allow_nan=False: NaN must have become null
    assert data["p99_ms"] is None
    assert data["server"]["cpu_ms_per_request"] is None
    back = LoadResult.from_dict(data)
    assert math.isnan(back.p99_ms)
    assert back.server is not None
    assert math.isnan(back.server.cpu_ms_per_request)
    assert back.errors_total == 2


def test_to_dict_has_every_error_kind_and_the_invariant_fields() -> None:
    data = through_json(built_result())
    assert list(data["errors"]) == list(ERROR_KINDS)
    assert data["errors_total"] == 2
    assert data["sent"] == data["ok"] + data["errors_total"] + data["in_flight"] == 605
    assert data["status_codes"] == {"200": 600, "503": 2}
    assert data["spec"]["body"] == 3  # the length, not the bytes
    assert data["spec"]["headers"] == [["X-A", "b"]]
    assert data["spec"]["url"] == "http://127.0.0.1:8080/"
    assert data["generator"]["loop"] == "uvloop"
    assert data["rps"] == pytest.approx(300.0)


def test_percentile_matches_the_named_fields() -> None:
    result = built_result()
    assert result.percentile(50) == result.p50_ms
    assert result.percentile(90) == result.p90_ms
    assert result.percentile(99) == result.p99_ms
    assert result.percentile(99.9) == result.p999_ms
    assert result.percentile(100) == result.max_ms
    assert result.percentile(50) <= result.percentile(75) <= result.percentile(99.99)


@pytest.mark.parametrize("q", [-1, 100.5, 1000])
def test_percentile_out_of_range_is_a_clear_error(q: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 100"):
        built_result().percentile(q)


def test_percentile_without_a_histogram_is_nan() -> None:
    result = dataclasses.replace(built_result(), latency_histogram="")
    assert math.isnan(result.percentile(99))


def test_derived_views() -> None:
    result = built_result()
    assert result.errors_total == sum(result.errors.values()) == 2
    assert result.rps == result.ok / result.duration_s
    assert result.rps_stdev == 0.0  # 300 ok in each of the two seconds
    uneven = dataclasses.replace(
        result, timeline=(TimelineRow(0, 10, 0, 1.0), TimelineRow(1, 20, 0, 1.0))
    )
    assert uneven.rps_stdev == pytest.approx(math.sqrt(50))
    # An open loop's drain lands in a row after the window: it is no second of the run.
    drained = dataclasses.replace(uneven, timeline=(*uneven.timeline, TimelineRow(2, 1, 0, 1.0)))
    assert drained.rps_stdev == pytest.approx(math.sqrt(50))
    part = dataclasses.replace(drained, duration_s=2.5)  # the last row is half a second
    assert part.rps_stdev == pytest.approx(math.sqrt(50))
    assert dataclasses.replace(result, duration_s=0.0).rps == 0.0


def test_results_are_frozen() -> None:
    result = built_result()
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.ok = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("p99", "p99_ms"),
        ("max", "max_ms"),
        ("errors_count", "errors_total"),
        ("p99_9_ms", "p999_ms"),
        ("status_code", "status_codes"),
    ],
)
def test_a_misspelt_attribute_names_the_closest(name: str, suggestion: str) -> None:
    # Issue 20, item 8: `r.p99` was a bare AttributeError.
    result = built_result()
    with pytest.raises(AttributeError) as raised:
        getattr(result, name)
    assert str(raised.value) == (
        f"'LoadResult' object has no attribute {name!r}; did you mean {suggestion!r}?"
    )


def test_an_attribute_like_nothing_gets_no_suggestion_and_probes_stay_plain() -> None:
    result = built_result()
    with pytest.raises(AttributeError, match=r"^'LoadResult' object has no attribute 'zzz'$"):
        result.zzz  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(result, "__array__")
    assert getattr(result, "_repr_html_", None) is None


def test_results_still_pickle_copy_and_replace() -> None:
    result = built_result(open_loop=True, server=SERVER)
    for again in (pickle.loads(pickle.dumps(result)), copy.copy(result), copy.deepcopy(result)):
        assert again.to_dict() == result.to_dict()
        assert again.p99_ms == result.p99_ms
    assert dataclasses.replace(result, ok=1).ok == 1


def test_fields_and_properties_are_read_without_the_hook() -> None:
    # __getattr__ runs only after ordinary lookup failed; __getattribute__ (which would run
    # on every read) is object's own, so a field read is still a plain slot read.
    assert LoadResult.__getattribute__ is object.__getattribute__
    assert "__getattr__" in vars(LoadResult)
    assert type(vars(LoadResult)["ok"]).__name__ == "member_descriptor"  # a slot


def test_a_spec_shows_only_the_fields_of_its_kind() -> None:
    # Issue 20, item 8: an HTTP load's failure showed `framing='echo'`. The option table
    # says which options belong to one kind; a spec's repr agrees with it.
    from pytest_netbench._input.options import LOAD_OPTIONS

    http = repr(LoadSpec(kind="http", host="127.0.0.1", port=80))
    echo = repr(LoadSpec(kind="echo", host="127.0.0.1", port=7, payload=b"x"))
    ws = repr(LoadSpec(kind="ws", host="127.0.0.1", port=80, payload=b"x"))
    fields = {f.name for f in dataclasses.fields(LoadSpec)}
    for option in LOAD_OPTIONS:
        if option.name not in fields:
            continue
        for kind, shown in (("http", http), ("echo", echo), ("ws", ws)):
            # A WebSocket load's message is held in the payload field.
            belongs = kind in option.loads or (kind == "ws" and option.name == "payload")
            assert (f" {option.name}=" in shown) == belongs, (kind, option.name)
    assert http.startswith("LoadSpec(kind='http', host='127.0.0.1', port=80, ")
    assert "framing=" not in http and "method=" not in echo and "scheme=" not in echo


def test_spec_urls() -> None:
    assert LoadSpec(kind="echo", host="::1", port=9).url == "tcp://[::1]:9"
    spec = LoadSpec(kind="http", host="127.0.0.1", port=443, scheme="https", target="/a?b=1")
    assert spec.url == "https://127.0.0.1:443/a?b=1"
    assert LoadSpec(kind="http", host="h", port=1, rate=5.0).mode == "open"
    assert LoadSpec(kind="http", host="h", port=1).mode == "closed"


def test_from_dict_ignores_unknown_generator_and_server_keys() -> None:
    data = through_json(built_result(server=SERVER))
    data["generator"]["added_in_a_later_version"] = 1
    data["server"]["also_new"] = 2
    back = LoadResult.from_dict(data)
    assert back.server == SERVER


def test_a_request_kinds_json_keeps_its_schema() -> None:
    """``by_request[name]``'s JSON (documented in docs/traffic.md): the counts as the load's,
    the latency figures flat under the load's names (null without an ok response), and the
    older ``latency`` group and histogram kept."""
    from pytest_netbench._model import RequestStats

    answered = RequestStats(
        name="list",
        method="GET",
        path="/items",
        duration_s=2.0,
        sent=12,
        ok=10,
        errors={"reset": 1},
        in_flight=1,
        status_codes={200: 10},
        latency=LatencySummary(count=10, p50_ms=1.0, p99_ms=4.0, p999_ms=5.0, max_ms=5.5),
    )
    data = json.loads(json.dumps(answered.to_dict()))
    assert list(data) == [
        "name", "method", "path", "duration_s", "sent", "ok", "errors", "errors_total",
        "in_flight", "status_codes", "rps", "p50_ms", "p75_ms", "p90_ms", "p95_ms", "p99_ms",
        "p999_ms", "max_ms", "mean_ms", "stdev_ms", "latency", "latency_histogram", "phases",
    ]  # fmt: skip
    assert list(data["errors"]) == list(ERROR_KINDS) and data["errors_total"] == 1
    assert data["rps"] == 5.0 and data["p999_ms"] == data["latency"]["p999_ms"] == 5.0
    assert data["p75_ms"] is None  # nan in the summary: null, as at the top of a result
    assert RequestStats.from_dict(data).p999_ms == 5.0

    failed = dataclasses.replace(answered, ok=0, errors={"status": 11}, latency=LatencySummary())
    assert all(failed.to_dict()[k] is None for k in ("p50_ms", "p999_ms", "max_ms"))
