"""Where a load may go: URL parsing, the loopback guard (no socket, no DNS), the fd budget.

The guard tests arm a tripwire (a ``sys.addaudithook`` hook) that fails the test on any
``socket.*`` audit event: creating a socket, connecting, resolving a name. That is not a
mock of the code under test, nothing is replaced: it proves that a refused target costs
no packet at all, not even a DNS query.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from pytest_netbench import (
    RemoteTargetError,
    ResourceLimitError,
    SpecError,
    echo_load,
    echo_spec,
    http_load,
    http_spec,
)
from pytest_netbench._host.preflight import ensure_fd_budget
from pytest_netbench._input.target import (
    guard_target,
    is_loopback_literal,
    parse_host_port,
    parse_http_url,
)

_tripwire = {"armed": False, "installed": False}


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _tripwire["armed"] and event.startswith("socket."):
        raise AssertionError(f"network touched before the guard refused: {event}{args!r}")


@pytest.fixture
def no_network() -> Iterator[None]:
    """Any socket creation, connect or name lookup from Python code fails the test.

    An audit hook, unlike replacing ``socket.socket``, leaves every module as it is (a
    module imported during the test must not keep a patched class). Hooks cannot be
    removed, so this one is installed once and only armed inside tests that ask for it.
    """
    if not _tripwire["installed"]:
        sys.addaudithook(_audit)
        _tripwire["installed"] = True
    _tripwire["armed"] = True
    try:
        yield
    finally:
        _tripwire["armed"] = False


def test_the_tripwire_itself_catches_sockets_and_lookups(no_network: None) -> None:
    import socket

    with pytest.raises(AssertionError, match=r"socket\.__new__"):
        socket.socket()
    with pytest.raises(AssertionError, match=r"socket\.getaddrinfo"):
        socket.getaddrinfo("example.com", 80)


# -- URL parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/x?y=1", ("http", "127.0.0.1", 8080, "/x?y=1")),
        ("http://127.0.0.1", ("http", "127.0.0.1", 80, "/")),
        ("https://localhost/", ("https", "localhost", 443, "/")),
        ("http://[::1]:9000/a", ("http", "::1", 9000, "/a")),
        ("HTTP://LOCALHOST:1/", ("http", "localhost", 1, "/")),
    ],
)
def test_parse_http_url(url: str, expected: tuple[str, str, int, str]) -> None:
    t = parse_http_url(url)
    assert (t.scheme, t.host, t.port, t.target) == expected


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("127.0.0.1:8080/", "no scheme: write it as http://127.0.0.1:8080/"),
        ("ftp://127.0.0.1/", "unsupported scheme 'ftp'"),
        ("http:///path", "has no host"),
        ("http://127.0.0.1:99999/", "bad port"),
        ("http://127.0.0.1:port/", "bad port"),
    ],
)
def test_bad_urls_are_spec_errors_saying_what_to_fix(url: str, fragment: str) -> None:
    with pytest.raises(SpecError) as failure:
        parse_http_url(url)
    assert fragment in str(failure.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:9000", ("127.0.0.1", 9000)),
        ("[::1]:7", ("::1", 7)),
        ("localhost:1", ("localhost", 1)),
    ],
)
def test_parse_host_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_host_port(text) == expected


@pytest.mark.parametrize("text", ["127.0.0.1", "127.0.0.1:", "127.0.0.1:http", ":"])
def test_bad_host_port(text: str) -> None:
    with pytest.raises(SpecError, match="HOST:PORT"):
        parse_host_port(text)


# -- the loopback guard ----------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]"])
def test_loopback_literals_pass_without_any_lookup(host: str, no_network: None) -> None:
    assert is_loopback_literal(host) is True
    guard_target(host, allow_remote=False)


@pytest.mark.parametrize(
    "host",
    [
        "10.0.0.1",
        "192.0.2.1",
        "0.0.0.0",
        "8.8.8.8",
        "::",
        "2001:db8::1",
        "example.com",
        "localhost.example.com",
        "127.0.0.1.nip.io",
        "my-prod-db",
    ],
)
def test_everything_else_is_refused_without_a_socket_or_a_lookup(
    host: str, no_network: None
) -> None:
    with pytest.raises(RemoteTargetError, match="allow_remote=True") as failure:
        guard_target(host, allow_remote=False)
    assert repr(host) in str(failure.value)


def test_remote_targets_are_refused_by_the_public_api_before_any_socket(
    no_network: None,
) -> None:
    # loop="asyncio": were the guard to let these through, the stdlib loop would resolve
    # and connect through the audited socket module (uvloop's C code is not audited).
    with pytest.raises(RemoteTargetError):
        http_load("http://example.com/", requests=1, loop="asyncio")
    with pytest.raises(RemoteTargetError):
        http_load("https://10.1.2.3:8443/", duration=1, loop="asyncio")
    with pytest.raises(RemoteTargetError):
        echo_load("192.0.2.7", 7, requests=1, loop="asyncio")
    with pytest.raises(RemoteTargetError):
        http_spec("http://127.0.0.1/", proxy="proxy.example.com:3128")


def test_a_loopback_proxy_does_not_open_the_way_to_a_remote_target(no_network: None) -> None:
    # A local forward proxy would carry the load on to the remote host.
    with pytest.raises(RemoteTargetError, match=r"example\.com"):
        http_spec("http://example.com/", proxy="127.0.0.1:3128")
    spec = http_spec("http://127.0.0.2:8080/", proxy="127.0.0.1:3128", requests=1)
    assert spec.proxy == ("127.0.0.1", 3128)


def test_localhost_is_allowed_when_it_resolves_to_loopback() -> None:
    guard_target("localhost", allow_remote=False)
    guard_target("LOCALHOST", allow_remote=False)


def test_allow_remote_lets_any_host_through_the_guard(no_network: None) -> None:
    guard_target("example.com", allow_remote=True)
    spec = http_spec("http://192.0.2.1:8080/", allow_remote=True, requests=1)
    assert spec.allow_remote
    assert spec.host == "192.0.2.1"


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1)")
def test_guard_refuses_in_a_process_with_no_network_at_all() -> None:
    """In an empty network namespace a DNS lookup would fail with gaierror; the guard must
    answer RemoteTargetError without trying."""
    code = textwrap.dedent(
        """
        from pytest_netbench import RemoteTargetError, http_load
        try:
            http_load("http://example.com/", requests=1)
        except RemoteTargetError:
            print("refused")
        """
    )
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n not permitted here: {probe.stderr.decode().strip()}")
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused"


# -- argument checks happen before traffic -----------------------------------------------------


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"connections": 0}, "connections"),
        ({"requests": -5}, "requests"),
        ({"duration": 0}, "duration"),
        ({"rate": -1.0}, "rate"),
        ({"arrival": "bursty"}, "arrival"),
        ({"pipeline": 4, "rate": 100.0}, "pipelin"),
        ({"requests": 1, "workers": 2}, "workers"),
        ({"loop": "tokio"}, "loop"),
        ({"headers": {"X-Bad": "a\r\nb"}}, "line break"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_http_options_are_spec_errors(
    options: dict[str, object], fragment: str, no_network: None
) -> None:
    with pytest.raises(SpecError, match=fragment):
        http_spec("http://127.0.0.1:8080/", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("port", "options", "fragment"),
    [(0, {}, "port"), (70000, {}, "port"), (9, {"payload_bytes": 0}, "payload_bytes")],
)
def test_bad_tcp_options_are_spec_errors(
    port: int, options: dict[str, object], fragment: str, no_network: None
) -> None:
    with pytest.raises(SpecError, match=fragment):
        echo_spec("127.0.0.1", port, **options)  # type: ignore[arg-type]


def test_neither_duration_nor_requests_means_ten_seconds() -> None:
    assert http_spec("http://127.0.0.1/").duration_s == 10.0
    assert http_spec("http://127.0.0.1/", requests=5).duration_s is None


# -- file-descriptor budget -------------------------------------------------------------------


def run_with_fd_limit(soft: int, hard: int, body: str) -> subprocess.CompletedProcess[str]:
    """Run ``body`` in a child whose RLIMIT_NOFILE is (soft, hard): this process keeps its own."""
    code = "import resource\n"
    code += f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard}))\n"
    code += textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )


def test_fd_budget_raises_the_soft_limit_when_the_hard_one_allows() -> None:
    done = run_with_fd_limit(
        128,
        4096,
        """
        from pytest_netbench._host.preflight import ensure_fd_budget
        print(ensure_fd_budget(1000), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        """,
    )
    assert done.returncode == 0, done.stderr
    granted, soft = map(int, done.stdout.split())
    assert granted == soft >= 1000


def test_fd_budget_beyond_the_hard_limit_fails_at_once_saying_how_many() -> None:
    done = run_with_fd_limit(
        128,
        256,
        """
        from pytest_netbench import ResourceLimitError, http_load
        try:
            http_load("http://127.0.0.1:9/", connections=1000, requests=1000)
        except ResourceLimitError as exc:
            print("refused:", exc)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:")
    assert "1000 connections need about" in done.stdout
    assert "256" in done.stdout


def test_fd_budget_within_the_current_limit_changes_nothing() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        pytest.skip("no fd limit here")
    assert ensure_fd_budget(1) == soft
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft
    assert issubclass(ResourceLimitError, Exception)
