"""Several "hosts" on one machine for the distributed tests: network namespaces joined by
veth pairs to a bridge, in a private test subnet that is routed nowhere.

Each host is a network namespace with ``lo`` up, one veth whose peer hangs on the bridge,
and one address in a /24 of the benchmarking range 198.18.0.0/15 (RFC 2544); its only route
is that /24, so nothing sent inside can leave the machine. The bridge holds the subnet's
first address, so the test process (in the host's own namespace) reaches the scheduler
and reads the servers' readiness; the host does not forward (and the namespaces have no
route to ask it to).

Every name starts with ``nbt<pid in hex>-``: a run's prefix names the pytest process that
made it, so leftovers of a run that was killed (SIGKILL: no teardown ran) are recognised
and removed by the next run (:func:`reap_dead_runs`), and nothing of a run still alive is
touched. :func:`leftovers` lists what is left of one prefix (the session-end check).
Processes inside are started through :class:`pytest_netbench.Server` (own process group,
death signal, a watchdog that kills them should the test process die).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import random
import re
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BASE_PREFIX = "nbt"
_RANGE = ipaddress.ip_network("198.18.0.0/15")
_PREFIX_PATTERN = re.compile(rf"^{BASE_PREFIX}([0-9a-f]+)-")
_IP_TIMEOUT_S = 10.0


def run_prefix() -> str:
    """The prefix of every name this process makes (``nbt1a2b3-``)."""
    return f"{BASE_PREFIX}{os.getpid():x}-"


def ip(*args: str, netns: str | None = None, check: bool = True) -> str:
    """Run ``ip ARGS`` (in ``netns`` when given) and return its output."""
    command = ["ip", *(["-n", netns] if netns else []), *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=_IP_TIMEOUT_S, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return done.stdout


def unavailable() -> str | None:
    """Why network namespaces cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs these tests as root)"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (Debian: apt-get install iproute2 util-linux)"
    probe = f"{run_prefix()}probe"
    try:
        ip("netns", "add", probe)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return f"cannot create a network namespace: {exc}"
    finally:
        ip("netns", "del", probe, check=False)
    return None


@dataclass(frozen=True, slots=True)
class Host:
    """One namespace: its role (``sched``, ``w1``, ...), address and veth pair."""

    role: str
    netns: str
    hostname: str
    address: str
    host_link: str  # the veth end on the bridge, in the machine's own namespace
    inner_link: str  # the veth end inside the namespace


@dataclass(frozen=True, slots=True)
class LinkCounters:
    rx_packets: int
    tx_packets: int
    rx_bytes: int
    tx_bytes: int


def link_counters(name: str) -> LinkCounters:
    """The kernel's counters of a link in the machine's own namespace."""
    stats = Path("/sys/class/net") / name / "statistics"
    read = {f: int((stats / f).read_text()) for f in LinkCounters.__slots__}
    return LinkCounters(**read)


def default_route_links() -> list[str]:
    """The links the machine's default routes leave by (IPv4 and IPv6)."""
    links: list[str] = []
    for family in ("-4", "-6"):
        for route in json.loads(ip("-j", family, "route", "show", "default", check=False) or "[]"):
            if route.get("dev") and route["dev"] not in links:
                links.append(route["dev"])
    return links


class Topology:
    """Namespaces for ``roles``, each on the bridge with an address of one free /24.

    :meth:`build` registers each removal on the ``ExitStack`` *before* creating the thing
    it removes, so a failure half-way leaves nothing behind.
    """

    def __init__(self, prefix: str, roles: Sequence[str]) -> None:
        self.prefix = prefix
        self.subnet = _free_subnet()
        self.bridge = f"{prefix}br"
        addresses = list(self.subnet.hosts())
        self.gateway = str(addresses[0])
        self.hosts = {
            role: Host(
                role=role,
                netns=f"{prefix}{role}",
                hostname=f"nb-{role}",
                address=str(addresses[10 + index]),
                host_link=f"{prefix}h{index}",
                inner_link=f"{prefix}n{index}",
            )
            for index, role in enumerate(roles)
        }
        for host in self.hosts.values():
            if len(host.host_link) > 15:
                raise ValueError(f"link name {host.host_link!r} is longer than 15 characters")

    def build(self, stack: contextlib.ExitStack) -> None:
        length = self.subnet.prefixlen
        stack.callback(ip, "link", "del", self.bridge, check=False)
        ip("link", "add", self.bridge, "type", "bridge")
        _no_ipv6(self.bridge)
        ip("addr", "add", f"{self.gateway}/{length}", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for host in self.hosts.values():
            stack.callback(ip, "netns", "del", host.netns, check=False)
            stack.callback(kill_inside, host.netns)  # runs first: a namespace outlives its del
            ip("netns", "add", host.netns)
            stack.callback(ip, "link", "del", host.host_link, check=False)
            ip("link", "add", host.host_link, "type", "veth", "peer", "name", host.inner_link)
            _no_ipv6(host.host_link)
            ip("link", "set", host.host_link, "master", self.bridge, "up")
            ip("link", "set", host.inner_link, "netns", host.netns)
            ip("link", "set", "lo", "up", netns=host.netns)
            sysctl = ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"]
            subprocess.run(
                ["ip", "netns", "exec", host.netns, *sysctl], check=True, timeout=_IP_TIMEOUT_S
            )
            ip("addr", "add", f"{host.address}/{length}", "dev", host.inner_link, netns=host.netns)
            ip("link", "set", host.inner_link, "up", netns=host.netns)

    def command(self, role: str, argv: Sequence[str], python: str) -> list[str]:
        """``argv`` run inside ``role``'s namespace under its own host name (a UTS
        namespace of its own, so ``socket.gethostname()`` tells the hosts apart)."""
        host = self.hosts[role]
        return [
            *("ip", "netns", "exec", host.netns, "unshare", "--uts", "--"),
            *(python, "-m", "hostname_exec", host.hostname, "--", *argv),
        ]

    def cut(self, role: str) -> None:
        """Take ``role``'s link down on the bridge side, as a pulled cable would."""
        ip("link", "set", self.hosts[role].host_link, "down")

    def mend(self, role: str) -> None:
        ip("link", "set", self.hosts[role].host_link, "up")

    def routes(self, role: str) -> list[str]:
        """Destinations of every IPv4 and IPv6 route of ``role``'s main table."""
        routes = []
        for family in ("-4", "-6"):
            listed = ip("-j", family, "route", "show", netns=self.hosts[role].netns)
            routes += [r["dst"] for r in json.loads(listed or "[]")]
        return routes

    def tcp_counters(self, role: str) -> dict[str, int]:
        """``role``'s namespace-wide TCP counters (``Tcp:`` of /proc/net/snmp)."""
        done = subprocess.run(
            ["ip", "netns", "exec", self.hosts[role].netns, "cat", "/proc/net/snmp"],
            capture_output=True, text=True, check=True, timeout=_IP_TIMEOUT_S,
        )  # fmt: skip
        tcp = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("Tcp:")]
        names, values = tcp
        return {name: int(value) for name, value in zip(names, values, strict=True)}


def kill_inside(netns: str) -> list[int]:
    """SIGKILL every process still inside ``netns`` (those this run started there); the
    pids it killed."""
    listed = subprocess.run(
        ["ip", "netns", "pids", netns], capture_output=True, text=True, check=False,
        timeout=_IP_TIMEOUT_S,
    )  # fmt: skip
    pids = [int(p) for p in listed.stdout.split()]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return pids


def leftovers(prefix: str) -> list[str]:
    """Namespaces, links and processes inside them whose names start with ``prefix``."""
    found = [f"netns {name}" for name in _netns_names() if name.startswith(prefix)]
    for name in _netns_names():
        if name.startswith(prefix):
            listed = ip("netns", "pids", name, check=False).split()
            found += [f"process {pid} in netns {name}" for pid in listed]
    found += [f"link {name}" for name in _link_names() if name.startswith(prefix)]
    return found


def remove(prefix: str) -> None:
    """Remove whatever is left of ``prefix``: processes inside, namespaces, links."""
    for name in _netns_names():
        if name.startswith(prefix):
            kill_inside(name)
            ip("netns", "del", name, check=False)
    for name in _link_names():
        if name.startswith(prefix):
            ip("link", "del", name, check=False)


def reap_dead_runs() -> list[str]:
    """Remove what runs whose pytest process is gone left behind; their prefixes."""
    prefixes = set()
    for name in [*_netns_names(), *_link_names()]:
        match = _PREFIX_PATTERN.match(name)
        if match and not _alive(int(match.group(1), 16)):
            prefixes.add(match.group(0))
    for prefix in sorted(prefixes):
        remove(prefix)
    return sorted(prefixes)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _netns_names() -> list[str]:
    return [line.split()[0] for line in ip("netns", "list", check=False).splitlines() if line]


def _link_names() -> list[str]:
    return [link["ifname"] for link in json.loads(ip("-j", "link", "show", check=False) or "[]")]


def _no_ipv6(link: str) -> None:
    """No IPv6 on a link of ours: no router solicitations or DAD in the counters."""
    with contextlib.suppress(OSError):
        Path(f"/proc/sys/net/ipv6/conf/{link}/disable_ipv6").write_text("1")


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 of the benchmarking range that no address of this machine is in."""
    used = []
    for link in json.loads(ip("-j", "-4", "addr", "show", check=False) or "[]"):
        for info in link.get("addr_info", []):
            used.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", strict=False))
    candidates = list(_RANGE.subnets(new_prefix=24))
    random.shuffle(candidates)
    for subnet in candidates:
        if not any(subnet.overlaps(other) for other in used):
            return subnet
    raise RuntimeError(f"no /24 of {_RANGE} is free on this machine")
