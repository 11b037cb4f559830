"""Loads whose shares run on a real Dask cluster (two worker processes): exact merged
counts, the shares released together, a lost worker reported, versions checked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import distributed
import pytest
from servers import EchoApp, EchoOptions, HttpApp, HttpOptions, ServerThread

from pytest_netbench import LoadProgress, LoadResult, RemoteTargetError, echo_load, http_load
from pytest_netbench._engine.shares.dask_transport import ClusterError, cluster_workers

Check = Callable[[LoadResult], LoadResult]


@pytest.fixture
def http_server() -> ServerThread:
    server = ServerThread(HttpApp(HttpOptions())).start()
    yield server
    server.stop()


def test_shares_run_one_per_worker_and_merge_exactly(
    cluster: distributed.Client, http_server: ServerThread, consistent: Check
) -> None:
    seen: list[object] = []
    r = consistent(
        http_load(
            http_server.url,
            connections=6,
            requests=3000,
            workers=2,
            cluster=cluster,
            progress=seen.append,
        )
    )
    assert (r.sent, r.ok, r.errors_total) == (3000, 3000, 0)
    shares = r.generator.shares
    assert [s.index for s in shares] == [0, 1]
    assert sum(s.sent for s in shares) == r.sent
    assert {s.worker for s in shares} == set(cluster_workers(cluster))
    assert all(s.host and not s.lost for s in shares)
    assert r.generator.workers == 2
    assert r.generator.start_spread_ms is not None and r.generator.start_spread_ms >= 0
    back = LoadResult.from_dict(r.to_dict())
    assert back.generator.shares == shares


def test_progress_streams_from_the_shares_with_each_hosts_counts(
    cluster: distributed.Client, http_server: ServerThread, consistent: Check
) -> None:
    seen: list[LoadProgress] = []
    r = consistent(
        http_load(
            http_server.url,
            connections=4,
            duration=2.5,
            workers=2,
            cluster=cluster,
            progress=seen.append,
        )
    )
    running = [p for p in seen if p.hosts]
    assert running, f"no report named a host in {len(seen)} report(s)"
    hosts = {s.host for s in r.generator.shares}
    for report in running:
        assert {h.host for h in report.hosts} <= hosts
        assert sum(h.shares for h in report.hosts) <= 2
        assert sum(h.completed for h in report.hosts) == report.completed <= r.sent
    assert running[-1].completed > 0


def test_an_echo_flood_opens_its_connections_first_on_every_share(
    cluster: distributed.Client, consistent: Check
) -> None:
    server = ServerThread(EchoApp(EchoOptions(payload_size=512))).start()
    try:
        r = consistent(
            echo_load(
                "127.0.0.1", server.port, connections=20, requests=400, workers=2, cluster=cluster
            )
        )
    finally:
        server.stop()
    assert (r.sent, r.ok, r.errors_total) == (400, 400, 0)
    assert r.generator.connect_first and r.generator.connections_ready == 20
    assert r.bytes_read == r.bytes_written == 400 * 512


def test_more_shares_than_workers_is_refused_before_any_load(
    cluster: distributed.Client, http_server: ServerThread
) -> None:
    with pytest.raises(ClusterError, match="has 2 worker\\(s\\) and the load asks for 3"):
        http_load(http_server.url, connections=3, requests=30, workers=3, cluster=cluster)


def test_a_worker_with_another_version_is_refused_with_both_versions(
    cluster: distributed.Client, http_server: ServerThread
) -> None:
    import pytest_netbench

    address = sorted(cluster_workers(cluster))[0]

    def pretend(version: str) -> None:
        from pytest_netbench import _version

        _version.VERSION = version

    cluster.run(pretend, "0.0.1-other", workers=[address])
    try:
        with pytest.raises(ClusterError) as caught:
            http_load(http_server.url, connections=2, requests=20, workers=2, cluster=cluster)
    finally:
        cluster.run(pretend, pytest_netbench.__version__, workers=[address])
    message = str(caught.value)
    assert f"Dask worker {address} runs pytest-netbench 0.0.1-other" in message
    assert f"this process runs pytest-netbench {pytest_netbench.__version__}" in message


def test_a_target_outside_loopback_is_refused_whoever_sends(cluster: distributed.Client) -> None:
    with pytest.raises(RemoteTargetError, match="allow_remote"):
        http_load("http://192.0.2.1/", connections=2, requests=2, workers=2, cluster=cluster)


def test_a_worker_killed_mid_run_is_reported_lost_and_the_rest_is_kept(
    cluster: distributed.Client, http_server: ServerThread, consistent: Check
) -> None:
    """Last in the module: the killed worker comes back (its nanny restarts it) under a
    new address."""
    pids = cluster.run(os.getpid)
    victim = sorted(pids)[1]
    killer = threading.Timer(1.0, os.kill, (pids[victim], signal.SIGKILL))
    killer.start()
    try:
        r = consistent(
            http_load(http_server.url, connections=4, duration=2.5, workers=2, cluster=cluster)
        )
    finally:
        killer.cancel()
    assert not r.valid
    assert "worker_lost" in r.invalid_causes
    assert any(victim in reason for reason in r.invalid_reasons)
    lost = [s for s in r.generator.shares if s.lost]
    kept = [s for s in r.generator.shares if not s.lost]
    assert [s.worker for s in lost] == [victim]
    assert len(kept) == 1 and kept[0].sent == r.sent > 0
    assert r.ok > 0


def test_the_cli_runs_its_shares_on_the_cluster(
    cluster: distributed.Client, http_server: ServerThread, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest_netbench.cli", "http", http_server.url,
            "-c", "4", "-n", "400", "--workers", "2",
            "--cluster", cluster.scheduler.address, "--json", str(out),
        ],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Shares, one per Dask worker" in done.stdout
    assert "the shares' windows opened within" in done.stdout
    data = json.loads(out.read_text())
    assert (data["sent"], data["ok"]) == (400, 400)
    shares = data["generator"]["shares"]
    assert [s["index"] for s in shares] == [0, 1]
    assert sum(s["ok"] for s in shares) == 400 and sum(s["errors_total"] for s in shares) == 0
    assert all(s["latency"]["count"] == s["ok"] and s["latency"]["p99_ms"] > 0 for s in shares)
    for share in shares:
        assert f"share {share['index']} on {share['host']} ({share['worker']})" in done.stdout


def test_the_cli_experiments_run_their_loads_on_the_cluster(
    cluster: distributed.Client, http_server: ServerThread, tmp_path: Path
) -> None:
    workers = set(cluster_workers(cluster))
    address = cluster.scheduler.address
    commands = {
        "sweep": ["--rates", "100,200", "-d", "0.5s"],
        "cold-start": ["-c", "2", "-d", "0.5s"],
    }
    for command, options in commands.items():
        out = tmp_path / f"{command}.json"
        done = subprocess.run(
            [
                sys.executable, "-m", "pytest_netbench.cli", command, http_server.url,
                *options, "--workers", "2", "--cluster", address, "--json", str(out),
            ],
            capture_output=True, text=True, timeout=90, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        data = json.loads(out.read_text())
        results = [step["result"] for step in data["steps"]] if "steps" in data else []
        results = results or [data["result"]]
        for result in results:
            shares = result["generator"]["shares"]
            assert {s["worker"] for s in shares} == workers, command
            assert sum(s["sent"] for s in shares) == result["sent"] > 0
            assert result["sent"] == result["ok"] + result["errors_total"] + result["in_flight"]


def test_a_runner_of_ones_own_takes_no_cluster() -> None:
    from pytest_netbench import SpecError, sweep

    with pytest.raises(SpecError, match="cluster= reaches the loads of the default runner"):
        sweep("http://127.0.0.1:9/", rates=[10], runner=http_load, cluster="tcp://127.0.0.1:1")


def test_the_plugin_runs_every_load_on_the_cluster_it_is_given(
    cluster: distributed.Client,
    http_server: ServerThread,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NETBENCH_TEST_TARGET", http_server.url)
    pytester.makepyfile(
        """
import os

def test_load(netbench):
    r = netbench.http(os.environ["NETBENCH_TEST_TARGET"], connections=4, requests=200,
                      workers=2)
    assert [s.index for s in r.generator.shares] == [0, 1]
    assert (r.sent, r.ok) == (200, 200)
"""
    )
    result = pytester.runpytest_subprocess(
        "--netbench", f"--netbench-cluster={cluster.scheduler.address}"
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("options", "load", "expect"),
    [
        # status errors, counted exactly across the shares
        ({"status_every": 5}, {"connections": 4, "requests": 400}, {"status": 80}),
        # a new connection per request
        ({}, {"connections": 4, "requests": 200, "keepalive": False}, {}),
        # chunked framing
        ({"framing": "chunked"}, {"connections": 4, "requests": 200}, {}),
        # every 3rd connection reset after its request: the rest is measured
        ({"reset_every": 3}, {"connections": 6, "requests": 300, "keepalive": False}, None),
    ],
)
def test_engine_conformance_over_the_cluster(
    cluster: distributed.Client,
    consistent: Check,
    options: dict[str, object],
    load: dict[str, object],
    expect: dict[str, int] | None,
) -> None:
    server = ServerThread(HttpApp(HttpOptions(**options))).start()  # type: ignore[arg-type]
    try:
        r = consistent(http_load(server.url, workers=2, cluster=cluster, **load))
    finally:
        server.stop()
    assert r.sent == load["requests"]
    assert sum(s.sent for s in r.generator.shares) == r.sent
    if expect is not None:
        assert {k: v for k, v in r.errors.items() if v} == expect
        assert r.ok == r.sent - sum(expect.values())
    else:
        assert r.errors["reset"] > 0 and r.ok > 0
