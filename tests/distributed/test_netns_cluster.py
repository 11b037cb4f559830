"""A real Dask cluster across network boundaries: the scheduler, two workers and the server
under test each in a network namespace of their own (``netns_cluster``, see netns.py), so
the load goes over veth links and a bridge to an address that is not loopback."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from pathlib import Path

import netns
from conftest import NetnsCluster


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
