"""Readiness checks against real servers: banner before listening, silent TCP, IPv4-only."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from pytest_netbench._errors import ServerStartupError, SpecError
from pytest_netbench._servers.launcher import Server
from pytest_netbench._servers.readiness import (
    AllReady,
    CallableReady,
    HttpReady,
    LogFollower,
    LogReady,
    TcpReady,
    as_check,
)


def connects(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1.0).close()
    except OSError:
        return False
    return True


def test_banner_long_before_listening_waits_for_the_port(helpers):
    # The banner is printed at once, the socket is bound 0.8 s later.
    cmd = helpers.netserver_command("--banner-delay", "0.8")
    with Server(cmd, ready=LogReady("banner") & TcpReady(), startup_timeout=20) as server:
        assert connects(server.host, server.port)
        assert "listening on" in server.log_tail()


def test_log_line_alone_can_be_the_readiness_signal(helpers):
    cmd = helpers.netserver_command("--banner-delay", "0.3")
    with Server(cmd, ready=LogReady(r"listening on \S+:\d+"), startup_timeout=20) as server:
        assert connects(server.host, server.port)


def test_http_check_of_server_that_accepts_but_never_answers_times_out(helpers, tmp_path: Path):
    cmd = helpers.netserver_command("--mode", "silent")
    check = HttpReady("/", timeout=0.3)
    server = Server(cmd, ready=check, startup_timeout=1.5, log_dir=tmp_path)
    with pytest.raises(ServerStartupError) as info:
        server.start()
    message = str(info.value)
    assert "did not become ready within 1.5 s" in message
    assert "accepted the TCP connection but sent no HTTP response" in message
    assert "banner: netserver" in message  # the log tail
    assert server.pid is not None and not helpers.alive(server.pid)


def test_http_check_with_wrong_status_reports_what_it_got(helpers, tmp_path: Path):
    cmd = helpers.netserver_command()
    check = HttpReady("/", status=204)
    server = Server(cmd, ready=check, startup_timeout=1.0, log_dir=tmp_path)
    with pytest.raises(ServerStartupError, match="answered 200, expecting 204"):
        server.start()


def test_http_check_accepts_a_status_range(helpers):
    with Server(helpers.netserver_command(), ready=HttpReady("/", status=range(200, 300))) as s:
        assert s.running


def test_ipv4_only_server_checked_on_ipv4_loopback_is_ready(helpers):
    cmd = ["{python}", helpers.netserver, "--host", "127.0.0.1", "--port", "{port}"]
    with Server(cmd, host="127.0.0.1") as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert connects("127.0.0.1", server.port)


def test_ipv4_only_server_checked_on_ipv6_loopback_fails_clearly(helpers, tmp_path: Path):
    if not helpers.ipv6_loopback_available():
        pytest.skip("this machine has no IPv6 loopback (::1) to check")
    # The server binds 127.0.0.1 whatever host the launcher was told: a family mismatch.
    cmd = ["{python}", helpers.netserver, "--host", "127.0.0.1", "--port", "{port}"]
    server = Server(cmd, host="::1", startup_timeout=1.0, log_dir=tmp_path)
    with pytest.raises(ServerStartupError) as info:
        server.start()
    message = str(info.value)
    assert f"[::1]:{server.port}" in message
    assert "refused" in message
    assert f"listen on 127.0.0.1:{server.port}" in message
    assert "address family" in message


def test_ipv6_server_checked_on_ipv6_loopback_works(helpers):
    if not helpers.ipv6_loopback_available():
        pytest.skip("this machine has no IPv6 loopback (::1)")
    with Server(helpers.netserver_command(), host="::1") as server:
        assert server.url == f"http://[::1]:{server.port}"
        assert connects("::1", server.port)


def test_callable_check_is_polled_until_true(helpers):
    calls: list[tuple[str, int]] = []

    def third_time_lucky(host: str, port: int) -> bool:
        calls.append((host, port))
        return len(calls) >= 3

    with Server(helpers.netserver_command(), ready=third_time_lucky) as server:
        assert len(calls) == 3
        assert calls[-1] == ("127.0.0.1", server.port)


def test_callable_check_exception_becomes_the_timeout_reason(helpers, tmp_path: Path):
    def broken(host: str, port: int) -> bool:
        raise LookupError("health endpoint missing")

    check = CallableReady(broken, "health_check")
    server = Server(helpers.netserver_command(), ready=check, startup_timeout=0.5, log_dir=tmp_path)
    with pytest.raises(ServerStartupError, match="health_check raised LookupError"):
        server.start()


def test_all_ready_needs_every_check(helpers, tmp_path: Path):
    never = CallableReady(lambda host, port: False, "never")
    check = AllReady(TcpReady(), never)
    server = Server(helpers.netserver_command(), ready=check, log_dir=tmp_path)
    server.startup_timeout = 0.5
    with pytest.raises(ServerStartupError, match="never returned False"):
        server.start()


def test_port_reported_on_stdout_is_used(helpers):
    cmd = ["{python}", helpers.netserver, "--port", "0", "--announce"]
    with Server(cmd, port_pattern=r"NETBENCH_LISTENING port=(\d+)") as server:
        assert server.port is not None and server.port > 0
        assert connects("127.0.0.1", server.port)


def test_readiness_arguments_are_checked():
    with pytest.raises(SpecError, match="must start with '/'"):
        HttpReady("health")
    with pytest.raises(SpecError, match="not a valid regex"):
        LogReady("(unclosed")
    with pytest.raises(SpecError, match="readiness check"):
        as_check("tcp")  # type: ignore[arg-type]
    combined = TcpReady() & LogReady("x") & HttpReady("/")
    assert isinstance(combined, AllReady) and len(combined.checks) == 3


def test_log_follower_reads_incrementally_and_sees_unterminated_lines(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(b"starting\nwarming up")
    follower = LogFollower(str(log))
    assert follower.search(re.compile("ready")) is None
    assert follower.search(re.compile("warming")) is not None  # no newline yet
    with log.open("ab") as f:
        f.write(b" done\nready on port 5\n")
    match = follower.search(re.compile(r"ready on port (\d+)"))
    assert match is not None and match.group(1) == "5"
