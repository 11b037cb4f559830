"""The kernel's answer about one port's TCP sockets (``_servers/sock_diag``): the one
request for both families finds what sock_diag's own two requests find (issue 35)."""

from __future__ import annotations

import contextlib
import socket
import sys
import time

import pytest

from pytest_netbench._servers.sock_diag import (
    TCP_ESTABLISHED,
    TCP_LISTEN,
    TCP_TIME_WAIT,
    _port_sockets_by_family,
    port_sockets,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sock_diag is Linux's")


def _mask(states: frozenset[int]) -> int:
    return sum(1 << state for state in states)


def test_one_request_finds_both_families_listening_connected_and_in_time_wait() -> None:
    with contextlib.ExitStack() as stack:
        v4 = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
        port = v4.getsockname()[1]
        families = [(v4, "127.0.0.1")]
        try:
            v6 = stack.enter_context(socket.socket(socket.AF_INET6))
            v6.bind(("::1", port))
            v6.listen()
            families.append((v6, "::1"))
        except OSError:  # no IPv6 loopback here: IPv4 alone
            pass
        served = []
        for listener, host in families:
            stack.enter_context(socket.create_connection((host, port)))
            served.append(stack.enter_context(listener.accept()[0]))
        # The server's end closes first: it holds the TIME_WAIT (on the server's port).
        ending = socket.create_connection(("127.0.0.1", port))
        closing, _ = v4.accept()
        closing.close()
        ending.close()
        time.sleep(0.05)

        for states, expected in (
            (frozenset({TCP_LISTEN}), {TCP_LISTEN: len(families)}),
            (frozenset({TCP_ESTABLISHED}), {TCP_ESTABLISHED: len(families)}),
            (
                frozenset({TCP_ESTABLISHED, TCP_TIME_WAIT}),
                {TCP_ESTABLISHED: len(families), TCP_TIME_WAIT: 1},
            ),
        ):
            found = port_sockets(port, states)
            assert sorted(found) == sorted(_port_sockets_by_family(port, _mask(states)))
            counts = {state: sum(1 for s, _ in found if s == state) for state in expected}
            assert counts == expected, (states, found)
