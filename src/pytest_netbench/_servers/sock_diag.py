"""TCP sockets on one local port, asked of Linux's kernel through netlink sock_diag.

The kernel filters by state and port itself and answers with the few sockets that match.
Reading /proc/net/tcp (what psutil's ``net_connections`` does, then mapping every socket
of every process to a pid) walks every socket of the machine in the caller: on a machine
that has just run loads, tens of thousands in TIME_WAIT, 0.2 s of CPU to find one listener
(issue 35; the sampler's socket counts had the same cost per sample).
"""

from __future__ import annotations

import os
import socket
import struct

# Netlink sock_diag constants (linux/netlink.h, linux/sock_diag.h, linux/inet_diag.h).
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_TCPDIAG_GETSOCK = 18  # the older request: both families in one walk (inet_diag_req)
_NLM_F_REQUEST_DUMP = 0x1 | 0x300
_NLMSG_ERROR = 2
_NLMSG_DONE = 3
_INET_DIAG_REQ_BYTECODE = 1
_BC_S_GE = 2
_BC_S_LE = 3
TCP_ESTABLISHED = 1
TCP_TIME_WAIT = 6
TCP_LISTEN = 10
_NLMSG_HEADER = struct.Struct("=IHHII")
_DIAG_REQUEST = struct.Struct("=BBBBI48s")  # inet_diag_req_v2: its sockid (sport) at the end
_COMPAT_REQUEST = struct.Struct("=BBBB48sII")  # inet_diag_req: family 0, sockid, states, dbs
_BC_OP = struct.Struct("=BBH")
# inet_diag_msg: family, state, timer, retrans, sockid (48), expires, rqueue, wqueue, uid,
# inode.
_DIAG_MESSAGE = struct.Struct("=BBBB48xIIIII")


def _port_filter(port: int) -> bytes:
    """Bytecode accepting sockets whose source port is ``port`` (sport >= p and <= p).

    A "no" jump past the end of the program rejects; running off the exact end accepts.
    """
    return b"".join(
        (
            _BC_OP.pack(_BC_S_GE, 8, 20),
            _BC_OP.pack(0, 0, port),
            _BC_OP.pack(_BC_S_LE, 8, 12),
            _BC_OP.pack(0, 0, port),
        )
    )


def port_sockets(port: int, states: frozenset[int]) -> list[tuple[int, int]]:
    """``(state, inode)`` of every TCP socket (IPv4 and IPv6) whose local port is ``port``
    and whose state is one of ``states`` (``TCP_LISTEN``...). Linux only: raises OSError
    (or ValueError, struct.error) where sock_diag cannot answer.

    Asking for any state but LISTEN walks every connected socket of the machine in the
    kernel, once per request: tens of thousands in TIME_WAIT after a few loads, about
    5 ms of system CPU a walk on the 2-core test machine. So one request asks for both
    families (the older TCPDIAG_GETSOCK, one walk where sock_diag's own takes two), and
    the port rides in its socket id too, which the kernel compares before it runs the
    filter; the two requests of :func:`_port_sockets_by_family` are the fallback.
    """
    mask = 0
    for state in states:
        mask |= 1 << state
    attribute = _filter_attribute(port)
    sockid = struct.pack("!H", port).ljust(48, b"\0")  # idiag_sport, in network order
    body = _COMPAT_REQUEST.pack(0, 0, 0, 0, sockid, mask, 0) + attribute
    header = _NLMSG_HEADER.pack(
        _NLMSG_HEADER.size + len(body), _TCPDIAG_GETSOCK, _NLM_F_REQUEST_DUMP, 1, 0
    )
    found: list[tuple[int, int]] = []
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as nl:
            nl.sendall(header + body)
            _read_dump(nl, found)
    except OSError:
        return _port_sockets_by_family(port, mask)
    return found


def _port_sockets_by_family(port: int, mask: int) -> list[tuple[int, int]]:
    """:func:`port_sockets` asked of sock_diag's own request, once per family."""
    attribute = _filter_attribute(port)
    sockid = struct.pack("!H", port).ljust(48, b"\0")
    found: list[tuple[int, int]] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as nl:
        for family in (socket.AF_INET, socket.AF_INET6):
            body = _DIAG_REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, mask, sockid) + attribute
            header = _NLMSG_HEADER.pack(
                _NLMSG_HEADER.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST_DUMP, 1, 0
            )
            nl.sendall(header + body)
            _read_dump(nl, found)
    return found


def _filter_attribute(port: int) -> bytes:
    """The request's INET_DIAG_REQ_BYTECODE attribute: :func:`_port_filter`."""
    program = _port_filter(port)
    return struct.pack("=HH", 4 + len(program), _INET_DIAG_REQ_BYTECODE) + program


def _read_dump(nl: socket.socket, found: list[tuple[int, int]]) -> None:
    while True:
        data = nl.recv(65536)
        offset = 0
        while offset + _NLMSG_HEADER.size <= len(data):
            length, kind, _, _, _ = _NLMSG_HEADER.unpack_from(data, offset)
            if kind == _NLMSG_DONE:
                return
            if kind == _NLMSG_ERROR:
                (errno_neg,) = struct.unpack_from("=i", data, offset + _NLMSG_HEADER.size)
                raise OSError(-errno_neg, "sock_diag request refused")
            _, state, _, _, _, _, _, _, inode = _DIAG_MESSAGE.unpack_from(
                data, offset + _NLMSG_HEADER.size
            )
            found.append((state, inode))
            offset += (length + 3) & ~3
            if length == 0:
                return


def socket_holders(
    inodes: set[int], pids: list[int] | None = None, *, one_each: bool = False
) -> set[int]:
    """The pids (of ``pids``, or of every process this user may look into) holding a
    file descriptor on one of the sockets ``inodes``. With ``one_each``, a holder of each
    socket is enough: the newest processes are looked into first and the scan stops once
    every socket has one (each of a process's descriptors is a readlink, thousands on a
    busy machine, and the server under test is seldom the oldest process)."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    if pids is None:
        pids = sorted((int(name) for name in os.listdir("/proc") if name.isdigit()), reverse=True)
    unheld = set(wanted)
    holders: set[int] = set()
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            names = os.listdir(fd_dir)
        except OSError:  # gone, or another user's
            continue
        for name in names:
            try:
                target = os.readlink(f"{fd_dir}/{name}")
            except OSError:
                continue
            if target in wanted:
                holders.add(pid)
                unheld.discard(target)
                if not one_each:
                    break
        if one_each and not unheld:
            break
    return holders
