"""A real Dask cluster across network boundaries: the scheduler, two workers and the server
under test each in a network namespace of their own (``netns_cluster``, see netns.py), so
the load goes over veth links and a bridge to an address that is not loopback."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import netns
import pytest

from pytest_netbench import LoadResult, RemoteTargetError, http_load
from pytest_netbench._compare.records import Record
from pytest_netbench._engine.shares.dask_transport import silence_bound_s
from pytest_netbench._host.cpus import available_cpus
from pytest_netbench._report.html import render_html_report
from pytest_netbench._report.summary import format_result
from pytest_netbench._stats.histogram import decode_histogram, new_histogram

if TYPE_CHECKING:  # a name for annotations only: at run time `conftest` may be another
    # directory's (tests/engine's, when both are collected in one run)
    from conftest import NetnsCluster

Check = Callable[[LoadResult], LoadResult]


def test_the_topology_gives_each_host_its_own_name_address_and_only_the_subnet(
    netns_cluster: NetnsCluster,
) -> None:
    topology = netns_cluster.topology
    names = netns_cluster.client.run(socket.gethostname)
    assert names == {netns_cluster.workers[r]: topology.hosts[r].hostname for r in ("w1", "w2")}
    for role, host in topology.hosts.items():
        assert ipaddress.ip_address(host.address) in topology.subnet
        # The subnet is each namespace's only route: nothing sent inside can leave.
        assert topology.routes(role) == [str(topology.subnet)], role
    assert netns_cluster.server.host == topology.hosts["srv"].address
    made = set(netns.leftovers(topology.prefix))
    assert {f"netns {h.netns}" for h in topology.hosts.values()} <= made
    assert {f"link {h.host_link}" for h in topology.hosts.values()} <= made


def test_what_a_killed_run_left_is_removed_by_the_next_and_a_live_runs_is_not(
    netns_prefix: str,
) -> None:
    dead = f"{netns.BASE_PREFIX}{int(Path('/proc/sys/kernel/pid_max').read_text()) + 1:x}-0"
    mine = f"{netns_prefix}x"
    with contextlib.ExitStack() as stack:
        for prefix in (dead, mine):
            stack.callback(netns.remove, prefix)
            netns.ip("netns", "add", f"{prefix}ns")
            netns.ip("link", "add", f"{prefix}h0", "type", "veth", "peer", "name", f"{prefix}n0")
        assert netns.reap_dead_runs() == [f"{dead[:-1]}"]
        assert netns.leftovers(dead) == []
        assert sorted(netns.leftovers(mine)) == [
            f"link {mine}h0",
            f"link {mine}n0",
            f"netns {mine}ns",
        ]
    assert netns.leftovers(mine) == []


def test_a_load_at_the_servers_namespace_address_runs_from_the_workers_on_purpose(
    netns_cluster: NetnsCluster, consistent: Check
) -> None:
    """With allow_remote, the shares on the two worker hosts load the server host over the
    bridge: exact counts, and every packet stayed between the namespaces."""
    topology = netns_cluster.topology
    server_link = topology.hosts["srv"].host_link
    outside = netns.default_route_links()
    before = {link: netns.link_counters(link) for link in (server_link, *outside)}
    r = consistent(
        http_load(
            netns_cluster.server.url,
            connections=8,
            requests=20_000,
            workers=2,
            cluster=netns_cluster.scheduler,
            allow_remote=True,
        )
    )
    after = {link: netns.link_counters(link) for link in before}
    assert (r.sent, r.ok, r.errors_total, r.in_flight) == (20_000, 20_000, 0, 0)
    assert [(s.host, s.worker) for s in r.generator.shares] == [
        (topology.hosts[role].hostname, netns_cluster.workers[role]) for role in ("w1", "w2")
    ]
    assert_shares_add_up(r)
    assert all(s.ok > 0 and s.errors_total == 0 for s in r.generator.shares)
    assert r.generator.start_spread_ms is not None
    assert [s.start_offset_ms for s in r.generator.shares].count(0.0) >= 1
    # At least a packet a request went over the server's link into its namespace; the
    # machine's way out carried fewer packets than that while the load ran (so not the
    # load's), and no namespace has a route to anywhere but the test subnet.
    into_server = after[server_link].tx_packets - before[server_link].tx_packets
    assert into_server >= r.sent
    for link in outside:
        sent_out = after[link].tx_packets - before[link].tx_packets
        print(f"{into_server} packets into the server's namespace, {sent_out} out of {link}")
        assert sent_out < into_server, (link, sent_out, into_server)
    for role in topology.hosts:
        assert topology.routes(role) == [str(topology.subnet)], role


def test_without_allow_remote_the_namespace_address_is_refused_before_any_socket(
    netns_cluster: NetnsCluster,
) -> None:
    """The loopback guard is unchanged: an address that is not loopback needs allow_remote,
    whoever sends the traffic; the server's namespace saw not one TCP segment."""
    before = netns_cluster.topology.tcp_counters("srv")
    with pytest.raises(RemoteTargetError, match="allow_remote"):
        http_load(
            netns_cluster.server.url,
            connections=2,
            requests=20,
            workers=2,
            cluster=netns_cluster.scheduler,
        )
    after = netns_cluster.topology.tcp_counters("srv")
    assert (after["InSegs"], after["PassiveOpens"]) == (before["InSegs"], before["PassiveOpens"])


def assert_shares_add_up(r: LoadResult) -> None:
    """Each share's figures hold the invariant and add up to the load's; the shares'
    latency histograms merged are the load's, count for count (the merge is lossless)."""
    shares = r.generator.shares
    for share in shares:
        assert share.sent == share.ok + share.errors_total + share.in_flight, share
    assert sum(s.sent for s in shares) == r.sent
    assert sum(s.ok for s in shares) == r.ok
    assert sum(s.in_flight for s in shares) == r.in_flight
    assert {k: sum(s.errors.get(k, 0) for s in shares) for k in r.errors} == dict(r.errors)
    merged = new_histogram()
    for share in shares:
        if not share.lost:
            assert share.latency.count == decode_histogram(share.latency_histogram).total_count
            merged.add(decode_histogram(share.latency_histogram))
    assert list(merged.counts) == list(decode_histogram(r.latency_histogram).counts)


def _cut_during(topology: netns.Topology, role: str, after_s: float) -> threading.Timer:
    cut = threading.Timer(after_s, topology.cut, (role,))
    cut.start()
    return cut


def test_a_worker_cut_off_mid_run_is_named_lost_and_the_rest_is_kept(
    netns_cluster: NetnsCluster, consistent: Check
) -> None:
    """w1's cable pulled a second into the load: its share is lost (host and address),
    w2's figures are the result's, the load ends by its duration + timeout + the silence
    bound (plus slack), and the cluster runs the next loads."""
    topology = netns_cluster.topology
    w1 = netns_cluster.workers["w1"]
    duration, timeout = 4.0, 2.0
    cut = _cut_during(topology, "w1", 1.0)
    began = time.monotonic()
    try:
        r = consistent(
            http_load(
                netns_cluster.server.url,
                connections=8,
                duration=duration,
                timeout=timeout,
                connect_timeout=1.0,
                workers=2,
                cluster=netns_cluster.scheduler,
                allow_remote=True,
            )
        )
        took = time.monotonic() - began
        print(format_result(r))
        assert took < duration + timeout + silence_bound_s(2) + 8.0, took
        assert not r.valid and "worker_lost" in r.invalid_causes
        lost, kept = r.generator.shares
        assert (lost.host, lost.worker) == ("nb-w1", w1)
        assert lost.lost.startswith(f"Dask worker {w1} on nb-w1: ")
        assert "has not heard from it" in lost.lost
        assert any(lost.lost in reason for reason in r.invalid_reasons)
        assert (kept.host, kept.lost) == ("nb-w2", "")
        assert kept.sent == r.sent > 0 and r.ok > 0
        assert_shares_add_up(r)
        assert (lost.sent, lost.ok, lost.errors_total, lost.latency.count) == (0, 0, 0, 0)

        # While w1 is still cut off, a load goes to the worker the scheduler hears from.
        one = consistent(
            http_load(
                netns_cluster.server.url,
                connections=4,
                requests=2000,
                workers=1,
                cluster=netns_cluster.scheduler,
                allow_remote=True,
            )
        )
        assert (one.sent, one.ok) == (2000, 2000)
        assert [s.host for s in one.generator.shares] == ["nb-w2"]
    finally:
        cut.cancel()
        topology.mend("w1")
        netns_cluster.wait_until_whole(time.time(), within_s=40.0)
    both = consistent(
        http_load(
            netns_cluster.server.url,
            connections=4,
            requests=4000,
            workers=2,
            cluster=netns_cluster.scheduler,
            allow_remote=True,
        )
    )
    # Both hosts take their share again. (Their first connects may still fail: a host
    # whose link just came back can answer EHOSTUNREACH until its neighbour entry for the
    # server is renewed; each such failure is counted, never lost.)
    assert both.sent == 4000 and "worker_lost" not in both.invalid_causes
    assert sorted(s.host for s in both.generator.shares) == ["nb-w1", "nb-w2"]
    assert all(s.ok > 0 and not s.lost for s in both.generator.shares)


def test_the_server_cut_off_mid_run_gives_every_share_connect_or_timeout_errors(
    netns_cluster: NetnsCluster, consistent: Check
) -> None:
    topology = netns_cluster.topology
    netns_cluster.wait_until_whole(time.time(), within_s=40.0)  # whatever ran before
    cut = _cut_during(topology, "srv", 1.0)
    try:
        r = consistent(
            http_load(
                netns_cluster.server.url,
                connections=8,
                duration=4.0,
                timeout=1.0,
                connect_timeout=1.0,
                workers=2,
                cluster=netns_cluster.scheduler,
                allow_remote=True,
            )
        )
    finally:
        cut.cancel()
        topology.mend("srv")
    print(format_result(r))
    assert r.ok > 0
    assert_shares_add_up(r)
    for share in r.generator.shares:  # every host lost the server, each counted its own
        assert {kind for kind, n in share.errors.items() if n} <= {"connect", "timeout"}
        assert share.errors["connect"] + share.errors["timeout"] > 0, share
    again = consistent(
        http_load(
            netns_cluster.server.url,
            connections=4,
            requests=1000,
            workers=2,
            cluster=netns_cluster.scheduler,
            allow_remote=True,
        )
    )
    # The server answers again (first connects may fail while the hosts' neighbour
    # entries for it are renewed; counted as connect errors).
    assert again.sent == 1000 and again.ok > 0
    assert {kind for kind, n in again.errors.items() if n} <= {"connect"}


@contextlib.contextmanager
def _on_cpu(threads: Callable[[], Iterable[int]], cpu: int) -> Iterator[None]:
    """The threads ``threads()`` names on ``cpu`` for the block (threads they start
    meanwhile inherit it), then each back where it was (one started meanwhile, where the
    others were)."""
    before = {}
    for tid in threads():
        before[tid] = os.sched_getaffinity(tid)
        os.sched_setaffinity(tid, {cpu})
    try:
        yield
    finally:
        wide = set().union(*before.values())
        for tid in threads():
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(tid, before.get(tid, wide))


def _threads(pid: int) -> list[int]:
    return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]


def _task_thread(netns_cluster: NetnsCluster, role: str) -> int:
    """The thread ``role``'s Dask worker runs its tasks in (a share among them): its one
    executor thread (``--nthreads 1``), made by a first task if it has none yet."""
    client, worker = netns_cluster.client, netns_cluster.workers[role]
    client.submit(int, workers=[worker], pure=False).result()
    found = client.run(
        lambda: [t.native_id for t in threading.enumerate() if "Dask-Default-Threads" in t.name],
        workers=[worker],
    )[worker]
    assert len(found) == 1, found
    return int(found[0])


@contextlib.contextmanager
def _hog(netns_cluster: NetnsCluster, role: str, cpu: int, nice: int) -> Iterator[None]:
    """A busy loop on ``cpu`` at ``nice`` (cpu_hog.py) on ``role``'s host, started by its
    Dask worker process: in its session, so the scheduler weighs the two by their nice
    values alone (with autogroups, processes of different sessions share a CPU evenly
    whatever their nice values), gone after the block."""
    client, worker = netns_cluster.client, netns_cluster.workers[role]
    argv = [sys.executable, "-m", "cpu_hog", str(cpu), str(nice), "90"]
    env = {"PYTHONPATH": str(Path(__file__).parent), "PATH": os.environ.get("PATH", "")}
    pid = client.run(os.posix_spawn, sys.executable, argv, env, workers=[worker])[worker]
    try:
        deadline = time.monotonic() + 10.0
        while os.getpriority(os.PRIO_PROCESS, pid) != nice:  # it has pinned itself
            assert time.monotonic() < deadline, "the CPU hog did not start"
            time.sleep(0.01)
        yield
    finally:
        os.kill(pid, signal.SIGKILL)
        client.run(os.waitpid, pid, 0, workers=[worker])  # reaped by its parent, no zombie


def test_a_host_whose_generator_saturates_is_marked_and_only_it(
    netns_cluster: NetnsCluster, consistent: Check
) -> None:
    """One host saturates while the other idles: the thread w1's worker runs its share in
    shares a CPU with a busy loop of higher priority started on w1's host (nice -15:
    about 28 times its weight, so the share gets a few % of that CPU); w2's and the server
    run on another CPU. At 2,500 requests a second a share (w2's needs a tenth of a core;
    w1's, batching its late sends, still about twice what it gets), w1's share is runnable
    (running or waiting for the CPU) the whole window and w2's is not: the result marks
    w1's share saturated, and only it; the reason names its host and says the other share
    was not; the text and HTML reports mark it. (A milder squeeze, 1,000 a share, left
    w1's share near keeping up, 85-90 % busy; a harsher one, nice -20, starved its worker's
    event loop of the GIL until the scheduler lost the worker.)"""
    cpus = available_cpus()
    if len(cpus) < 2:
        pytest.skip("needs two CPUs: one for the hog and w1's share, one for the rest")
    hot_cpu, cool_cpu = cpus[0], cpus[1]
    server = netns_cluster.server.pid
    assert server is not None
    with contextlib.ExitStack() as stack:
        # Only w1's task thread shares the hog's CPU: the rest of its worker (the event
        # loop's heartbeats, the share's link to the scheduler) is free to run elsewhere,
        # as on a host whose generator thread alone is starved.
        hot_thread, cool_thread = (_task_thread(netns_cluster, r) for r in ("w1", "w2"))
        stack.enter_context(_on_cpu(lambda: [hot_thread], hot_cpu))
        stack.enter_context(_on_cpu(lambda: [cool_thread], cool_cpu))
        stack.enter_context(_on_cpu(lambda: _threads(server), cool_cpu))
        stack.enter_context(_hog(netns_cluster, "w1", hot_cpu, nice=-15))
        r = consistent(
            http_load(
                netns_cluster.server.url,
                rate=5000,
                duration=3.0,
                connections=8,
                workers=2,
                cluster=netns_cluster.scheduler,
                allow_remote=True,
            )
        )
    report = format_result(r)
    print(report)
    shares = {s.host: s for s in r.generator.shares}
    hot, cool = shares["nb-w1"], shares["nb-w2"]
    assert_shares_add_up(r)
    assert hot.saturated and hot.busy_percent >= 90, hot
    assert not cool.saturated and cool.busy_percent < 90, cool
    assert "generator_saturated" in r.invalid_causes
    (reason,) = [t for t in r.invalid_reasons if t.startswith("generator saturated")]
    assert f"share {hot.index} on nb-w1 ({hot.worker})" in reason
    assert f"the other share was not (share {cool.index} on nb-w2 busy" in reason
    assert "so that host, not the server, set the pace of its share" in reason
    # The text report marks the busy figure and says it in words.
    words = " ".join(report.split())
    assert f"share {hot.index} on nb-w1 ({hot.worker}): SATURATED: running or waiting" in words
    rows = [
        line.split()
        for line in report.splitlines()
        if line.split()[:2] == [str(hot.index), "nb-w1"]
    ]
    assert rows and rows[0][-1].endswith("%!"), rows
    page = render_html_report(records=[Record("t", "t", {}, r)], plots=False, environment={})
    assert f"<b>saturated</b>: share {hot.index} on nb-w1 ({hot.worker})" in page
    assert page.count('<td class="num invalid" title="saturated:') == 1


# The shares' windows open within this of each other across the namespaces (the release
# crosses the scheduler: an event the caller sets, each worker hears), on a busy 2-core
# machine too; docs/distributed.md states it. Measured here: 0.01-2.5 ms, up to 5.6 ms
# with two CPU burners beside the tests.
START_SPREAD_BOUND_MS = 50.0


@pytest.mark.parametrize("connect_first", [False, True], ids=["released", "connected-first"])
def test_the_shares_windows_open_together_within_the_stated_bound(
    netns_cluster: NetnsCluster, consistent: Check, connect_first: bool
) -> None:
    """Released together (and, connecting first, released again once every share's
    connections are open): each load's shares open their windows within
    START_SPREAD_BOUND_MS of each other, the result says how far apart, and each share's
    start_offset_ms is its own part of that."""
    spreads = []
    for _ in range(3):
        r = consistent(
            http_load(
                netns_cluster.server.url,
                connections=4,
                requests=400,
                workers=2,
                connect_first=connect_first,
                cluster=netns_cluster.scheduler,
                allow_remote=True,
            )
        )
        assert (r.sent, r.ok) == (400, 400)
        spread = r.generator.start_spread_ms
        assert spread is not None
        offsets = sorted(s.start_offset_ms or 0.0 for s in r.generator.shares)
        assert offsets[0] == 0.0 and offsets[-1] == spread
        spreads.append(spread)
    print(f"start spreads across the namespaces: {', '.join(f'{s:.2f}' for s in spreads)} ms")
    assert max(spreads) <= START_SPREAD_BOUND_MS, spreads
