"""Crosschecks with the real wrk and ab against a real local server (the catalog's C server,
else its asyncio one). Only relations are asserted: counts, ratios present, errors seen by
both tools; never a throughput or a time."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_netbench import (
    CrosscheckResult,
    LoadResult,
    LoadSpec,
    RemoteTargetError,
    Server,
    SpecError,
    ToolchainMissing,
    ToolNotInstalled,
    catalog,
    crosscheck,
    feeders,
)
from pytest_netbench._experiment.tool_runs import run_tool

needs_wrk = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")
needs_h2load = pytest.mark.skipif(
    shutil.which("h2load") is None,
    reason="h2load is not installed (apt-get install nghttp2-client)",
)
needs_ab = pytest.mark.skipif(
    shutil.which("ab") is None, reason="ab is not installed (apt-get install apache2-utils)"
)


@pytest.fixture(scope="module")
def hello_url() -> Iterator[str]:
    for name in ("c", "asyncio_streams"):
        try:
            spec = catalog.get(name)
        except ToolchainMissing:
            continue
        with Server.from_spec(spec) as server:
            yield server.url
        return
    pytest.skip("neither the C nor the asyncio catalog server runs here")


def check_agreeing(
    result: CrosscheckResult, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    consistent(result.netbench)
    assert result.netbench.errors_total == 0 and result.other.errors_total == 0
    assert result.netbench.ok > 0 and result.other.requests > 0
    for metric, ratio in result.ratios.items():
        assert math.isfinite(ratio) and ratio > 0, (metric, result.to_dict()["figures"])
    assert math.isnan(result.ratio("errors"))  # 0 errors on the other side: no ratio


@needs_wrk
def test_wrk_measures_the_same_load(
    hello_url: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    result = crosscheck(hello_url + "/", tool="wrk", duration=1, connections=4)
    check_agreeing(result, consistent)
    assert result.tool == "wrk" and result.other.version.startswith("wrk ")
    assert result.other.command[-1] == hello_url + "/"
    assert list(result.other.command[4:8]) == ["-c", "4", "-d", "1s"]
    assert result.netbench.spec is not None and result.netbench.spec.duration_s == 1.0


@needs_ab
@pytest.mark.parametrize("keepalive", [True, False], ids=["keepalive", "close"])
def test_ab_measures_the_same_requests(
    hello_url: str, keepalive: bool, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    result = crosscheck(
        hello_url + "/", tool="ab", requests=500, connections=4, keepalive=keepalive
    )
    check_agreeing(result, consistent)
    assert result.other.requests == result.netbench.ok == 500
    assert ("-k" in result.other.command) is keepalive
    # From ab's -e file: every percent, to the microsecond, not its whole-ms table.
    assert len(result.other.percentiles) == 101
    assert result.other.p50_ms <= result.other.p99_ms


@needs_wrk
@needs_ab
def test_both_tools_count_error_statuses(hello_url: str) -> None:
    for tool, length in (("wrk", {"duration": 1}), ("ab", {"requests": 200})):
        result = crosscheck(hello_url + "/status/503", tool=tool, connections=2, **length)
        nb = result.netbench
        assert nb.errors["status"] == nb.sent - nb.in_flight > 0
        assert result.other.errors["status"] == result.other.requests > 0, result.other.output
        # netbench's req/s counts ok responses only; the tools' count every response.
        assert result.netbench.rps == 0 and result.other.rps > 0
        assert result.ratio("rps") == 0


@needs_wrk
def test_the_result_survives_json(hello_url: str) -> None:
    result = crosscheck(hello_url + "/", duration=1, connections=2)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["kind"] == "crosscheck" and set(data["figures"]) == {
        "rps", "p50_ms", "p90_ms", "p99_ms", "errors"
    }  # fmt: skip
    assert data["figures"]["rps"]["wrk"] == result.other.rps
    again = CrosscheckResult.from_dict(data)
    assert again.other == result.other
    assert again.ratios == pytest.approx(result.ratios)


def never(spec: LoadSpec) -> LoadResult:
    raise AssertionError(f"no load may run: {spec}")


def test_a_missing_tool_names_its_package_before_any_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for tool, options, package in (
        ("wrk", {"duration": 1}, "apt-get install wrk"),
        ("ab", {"requests": 10}, "apt-get install apache2-utils"),
    ):
        with pytest.raises(ToolNotInstalled, match=f"{tool} is not installed.*{package}"):
            crosscheck("http://127.0.0.1:9/", tool=tool, runner=never, **options)


def test_remote_targets_are_refused_for_both_tools() -> None:
    with pytest.raises(RemoteTargetError):
        crosscheck("http://192.0.2.1/", tool="wrk", duration=1, runner=never)
    remote = LoadSpec(kind="http", host="192.0.2.1", port=80, duration_s=1.0)
    for tool in ("wrk", "ab"):
        with pytest.raises(RemoteTargetError, match="only loopback"):
            run_tool(tool, dataclasses.replace(remote, requests=10 if tool == "ab" else None))


def test_an_unknown_tool_is_refused() -> None:
    with pytest.raises(SpecError, match="tool must be one of wrk, ab"):
        crosscheck("http://127.0.0.1:9/", tool="httperf", runner=never)


def test_a_load_with_feeders_is_refused_before_any_load() -> None:
    for tool, options in (("wrk", {"duration": 1}), ("ab", {"requests": 10})):
        with pytest.raises(SpecError, match=f"one fixed request, as {tool} does: drop feeders"):
            crosscheck(
                "http://127.0.0.1:9/items/${id}",
                tool=tool,
                feeders={"id": feeders.count()},
                runner=never,
                **options,
            )


def test_an_http2_load_is_refused_before_any_load() -> None:
    for tool, options in (("wrk", {"duration": 1}), ("ab", {"requests": 10})):
        with pytest.raises(SpecError, match=f"{tool} speaks HTTP/1.1 only: drop protocol='h2'"):
            crosscheck(
                "http://127.0.0.1:9/",
                tool=tool,
                protocol="h2",
                streams=4,
                runner=never,
                **options,
            )


# -- h2load, for HTTP/2 loads, against the catalog's Go net/http server over h2c --
@pytest.fixture(scope="module", params=["h2c", "h2"])
def go_h2_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """Go's net/http speaking HTTP/2: http:// for h2c, https:// for TLS (self-signed)."""
    from pytest_netbench._servers import build

    try:
        binary = str(build.ensure_built(catalog.GO_H2).artifact)
    except ToolchainMissing as exc:
        pytest.skip(f"the Go HTTP/2 server cannot be built here: {exc}")
    mode = request.param
    server = Server([binary, mode, "{host}", "{port}"], port_pattern=catalog.PORT_PATTERN)
    server.start()
    try:
        yield f"{'http' if mode == 'h2c' else 'https'}://127.0.0.1:{server.port}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def go_h2c_url() -> Iterator[str]:
    from pytest_netbench._servers import build

    try:
        binary = str(build.ensure_built(catalog.GO_H2).artifact)
    except ToolchainMissing as exc:
        pytest.skip(f"the Go HTTP/2 server cannot be built here: {exc}")
    server = Server([binary, "h2c", "{host}", "{port}"], port_pattern=catalog.PORT_PATTERN)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


@needs_h2load
def test_h2load_measures_the_same_http2_load(
    go_h2_url: str, consistent: Callable[[LoadResult], LoadResult]
) -> None:
    # protocol='h2' is h2load's default: the load is HTTP/2 without saying so. Over TLS
    # the certificate is self-signed (h2load checks none).
    result = crosscheck(
        go_h2_url + "/", tool="h2load", duration=1, connections=2, streams=4, verify_tls=False
    )
    consistent(result.netbench)
    assert result.netbench.generator.protocol == "h2"
    assert result.other.version.startswith("h2load ")
    assert list(result.other.command[1:9]) == ["-c", "2", "-m", "4", "-t", "1", "-D", "1"]
    assert result.netbench.errors_total == 0 and result.other.errors_total == 0
    assert result.netbench.ok > 0 and result.other.requests > 0
    assert result.metrics == ("rps", "mean_ms", "stdev_ms", "max_ms", "errors")
    for metric, ratio in result.ratios.items():
        assert math.isfinite(ratio) and ratio > 0, (metric, result.to_dict()["figures"])
    again = CrosscheckResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.other == result.other and again.ratios.keys() == result.ratios.keys()


@needs_h2load
def test_h2load_and_netbench_count_the_same_error_statuses(go_h2c_url: str) -> None:
    result = crosscheck(
        go_h2c_url + "/missing", tool="h2load", requests=200, connections=2, streams=4
    )
    assert result.netbench.errors == {**result.netbench.errors, "status": 200}
    assert result.netbench.status_codes == {404: 200}
    assert result.other.requests == 200 and result.other.errors == {"status": 200, "errored": 0}
    assert result.ratio("errors") == 1.0


def test_h2load_refuses_an_http1_load_before_any_load() -> None:
    with pytest.raises(SpecError, match="h2load is the HTTP/2 crosscheck: pass protocol='h2'"):
        crosscheck("http://127.0.0.1:9/", tool="h2load", protocol="http1", runner=never)


@needs_wrk
def test_the_second_tool_runs_on_the_loads_cpus(hello_url: str) -> None:
    # crosscheck(..., cpus=) pins netbench's side; the second tool must meet the same cores.
    import os
    import threading

    import psutil

    before = os.sched_getaffinity(0)
    core = sorted(before)[-1]
    seen: list[list[int]] = []
    done = threading.Event()

    def watch_for_wrk() -> None:
        # Only the load counts: crosscheck also runs `wrk --version` (unpinned) to record
        # which wrk measured, and a watcher that met that one first saw both cores.
        me = psutil.Process()
        while not done.is_set() and not seen:
            for child in me.children():
                try:
                    if child.name() == "wrk" and hello_url + "/" in child.cmdline():
                        seen.append(child.cpu_affinity())
                except psutil.Error:
                    pass
            done.wait(0.02)

    watcher = threading.Thread(target=watch_for_wrk)
    watcher.start()
    try:
        result = crosscheck(hello_url + "/", tool="wrk", duration=1, connections=2, cpus=[core])
    finally:
        done.set()
        watcher.join()
    assert result.netbench.spec is not None and result.netbench.spec.cpus == (core,)
    assert seen == [[core]]
    assert os.sched_getaffinity(0) == before  # this thread is not left pinned
