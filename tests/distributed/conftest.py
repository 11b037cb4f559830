"""A real Dask cluster (``LocalCluster``: a scheduler and two worker processes) for the
distributed transport's tests, and the loopback test servers they load; and a real cluster
across network boundaries (``netns_cluster``: a ``dask scheduler``, two ``dask worker``
processes and a catalog server, each in a network namespace of its own, see netns.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import netns
import pytest

from pytest_netbench import LogReady, Server, ToolchainMissing
from pytest_netbench._engine.shares.dask_transport import cluster_workers
from pytest_netbench._servers import catalog

distributed = pytest.importorskip("distributed", reason="the distributed extra is not installed")

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))  # the engine's test servers


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.Client]:
    local = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    )
    client = distributed.Client(local)
    try:
        yield client
    finally:
        client.close()
        local.close()


@pytest.fixture(autouse=True)
def _bounded(hang_guard: None) -> None:
    """No cluster test may hang the suite."""


# -- hosts in network namespaces (netns.py): a real cluster across network boundaries --
HERE = Path(__file__).parent
# The catalog server under load in the server's namespace: the first this machine runs.
_SERVERS = ("go", "c", "asyncio_streams")


@dataclass(frozen=True)
class NetnsCluster:
    """A scheduler, two workers and a catalog server, each in a namespace of its own."""

    topology: netns.Topology
    client: distributed.Client
    scheduler: str  # its address, tcp://198.18.x.y:port
    server: Server
    roles: tuple[str, ...] = ("w1", "w2")

    @property
    def workers(self) -> dict[str, str]:
        """Role -> the address its Dask worker has now (its nanny restarts it under a
        new port should the scheduler drop it), by the name each worker was given."""
        info = cluster_workers(self.client)
        return {w["name"]: address for address, w in info.items() if w["name"] in self.roles}

    def wait_until_whole(self, since: float, within_s: float) -> None:
        """Until every worker is registered and the scheduler has had a heartbeat from it
        since ``since`` (``time.time()``: a link mended; one machine, one clock)."""
        deadline = time.monotonic() + within_s
        while True:
            info = cluster_workers(self.client)
            heard = {w["name"] for w in info.values() if w["last_seen"] >= since}
            if heard >= set(self.roles):
                return
            assert time.monotonic() < deadline, f"not heard from since: {sorted(info)}"
            time.sleep(0.25)


@pytest.fixture(scope="session")
def netns_prefix() -> Iterator[str]:
    """This run's name prefix; at the end of the session, nothing with it may be left."""
    reason = netns.unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail(f"CI runs as root, so the namespace tests must run: {reason}")
        pytest.skip(reason)
    netns.reap_dead_runs()
    prefix = netns.run_prefix()
    yield prefix
    left = netns.leftovers(prefix)
    if left:
        netns.remove(prefix)
        pytest.fail(f"the namespace tests left behind: {', '.join(left)}")


_topologies = itertools.count()


@pytest.fixture(scope="module")
def netns_cluster(netns_prefix: str) -> Iterator[NetnsCluster]:
    with contextlib.ExitStack() as stack:
        topology = netns.Topology(
            f"{netns_prefix}{next(_topologies)}", ("sched", "w1", "w2", "srv")
        )
        topology.build(stack)
        hosts = topology.hosts
        dask = str(Path(sys.executable).with_name("dask"))
        scheduler = _in_namespace(
            stack,
            topology,
            "sched",
            [dask, "scheduler", "--host", hosts["sched"].address, "--port", "0",
             "--no-dashboard"],
            port_pattern=r"Scheduler at:\s+tcp://[\d.]+:(\d+)",
        )  # fmt: skip
        address = f"tcp://{hosts['sched'].address}:{scheduler.port}"

        def worker(role: str) -> list[str]:
            return [dask, "worker", address, "--host", hosts[role].address, "--nthreads", "1",
                    "--no-dashboard", "--name", role]  # fmt: skip

        workers = {
            role: _in_namespace(
                stack,
                topology,
                role,
                worker(role),
                port_pattern=r"Start worker at:\s+tcp://[\d.]+:(\d+)",
                ready=LogReady("Registered to"),
                start=False,
            )
            for role in ("w1", "w2")
        }
        server = _catalog_server(stack, topology)
        with ThreadPoolExecutor(len(workers)) as pool:  # two Python start-ups at once
            list(pool.map(Server.start, workers.values()))
        client = distributed.Client(address, timeout=30)
        stack.callback(client.close)
        yield NetnsCluster(topology, client, address, server, tuple(workers))


def _in_namespace(
    stack: contextlib.ExitStack,
    topology: netns.Topology,
    role: str,
    argv: list[str],
    *,
    start: bool = True,
    **options: Any,
) -> Server:
    """``argv`` as a :class:`Server` in ``role``'s namespace, stopped when the stack ends
    (the stop is registered first: stopping a server that never started does nothing)."""
    server = Server(
        topology.command(role, argv, sys.executable),
        host=topology.hosts[role].address,
        env={"PYTHONPATH": str(HERE)},  # for `python -m hostname_exec`
        name=f"{role}-{Path(argv[0]).name}",
        **options,
    )
    stack.callback(server.stop)
    if start:
        server.start()
    return server


def _catalog_server(stack: contextlib.ExitStack, topology: netns.Topology) -> Server:
    reasons = []
    for name in _SERVERS:
        try:
            spec = catalog.get(name)
        except ToolchainMissing as exc:
            reasons.append(f"{name}: {exc}")
            continue
        host = topology.hosts["srv"]
        command = ("ip", "netns", "exec", host.netns, *spec.command)
        server = Server.from_spec(dataclasses.replace(spec, command=command), host=host.address)
        stack.callback(server.stop)
        return server.start()
    raise RuntimeError("no catalog server runs here: " + "; ".join(reasons))
