"""End-to-end: the server fixtures -- indirect parametrisation, scopes, cleanup, bad input."""

from __future__ import annotations

import os
import sys

import pytest

PORT_PATTERN = r"NETBENCH_LISTENING port=(\d+)"
HELLO = [sys.executable, "hello_app.py", "--host", "{host}", "--port", "{port}"]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_indirect_server_with_module_scope_from_ini(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makeini("[pytest]\nnetbench_server_scope = module\n")
    pytester.makepyfile(
        f"""
        import pytest

        SERVERS = [
            {{"command": {HELLO!r}, "port_pattern": {PORT_PATTERN!r}, "name": "fast"}},
            {{"command": {[*HELLO, "--delay-ms", "1"]!r}, "name": "slow"}},
        ]

        @pytest.mark.parametrize("connections", [1, 2])
        @pytest.mark.parametrize("server", SERVERS, indirect=True)
        def test_hello(netbench, server, connections):
            with open("pids.txt", "a") as f:
                f.write(f"{{server.name}} {{server.pid}}\\n")
            r = netbench.http(server.url, requests=50, connections=connections)
            assert r.ok == 50
            assert r.server is not None  # the fixture's server was found and sampled
        """
    )
    result = pytester.runpytest_subprocess("--netbench", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_hello[[]fast-1[]] PASSED*"])  # ids from the names
    lines = (pytester.path / "pids.txt").read_text().split()
    pids = dict(zip(lines[::2], lines[1::2], strict=True))
    assert set(pids) == {"fast", "slow"}  # one server per param, reused across connections
    assert not any(_pid_alive(int(pid)) for pid in pids.values())  # all stopped at the end
    result.stdout.fnmatch_lines(["*connections=1*connections=2*", "fast *", "slow *"])


def test_make_server_fixture_declares_a_named_server(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makeconftest(
        f"""
        from pytest_netbench.plugin import make_server_fixture

        hello_server = make_server_fixture(
            {HELLO!r}, scope="session", name="hello_server", port_pattern={PORT_PATTERN!r}
        )
        """
    )
    pytester.makepyfile(
        """
        def test_one(netbench, hello_server):
            assert netbench.http(hello_server.url, requests=20, connections=1).ok == 20

        def test_two(netbench, hello_server):
            assert netbench.http(hello_server.url, requests=20, connections=1).ok == 20

        def test_not_netbench():
            pass
        """
    )
    assert pytester.runpytest_subprocess("--netbench").ret == 0
    # Without the flag, tests using a declared server fixture are skipped, not started.
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, skipped=2)


def test_netbench_server_factory_stops_servers_at_teardown(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(
        f"""
        def test_two_servers(netbench_server):
            a = netbench_server({HELLO!r}, port_pattern={PORT_PATTERN!r})
            b = netbench_server({HELLO!r})
            assert a.running and b.running and a.port != b.port
            with open("pids.txt", "w") as f:
                f.write(f"{{a.pid}} {{b.pid}}")
        """
    )
    pytester.runpytest_subprocess("--netbench").assert_outcomes(passed=1)
    pids = [int(p) for p in (pytester.path / "pids.txt").read_text().split()]
    assert len(pids) == 2 and not any(_pid_alive(p) for p in pids)


def test_server_errors_are_clear(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        def test_unparametrised(server):
            pass

        def test_bad_reference(netbench_server):
            netbench_server(42)

        def test_server_exits_at_start(netbench_server):
            netbench_server({[sys.executable, "-c", "raise SystemExit(7)", "{port}"]!r})
        """
    )
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(failed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*fixture 'server' needs a server: parametrise it with indirect=True*",
            "*cannot start server '42'*give a catalog name*",
            "*cannot start server*exit*7*",
        ]
    )


def test_catalog_servers_by_name_and_skip_when_they_cannot_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("server", ["asyncio_streams"], indirect=True)
        def test_catalog_hello(netbench, server):
            r = netbench.http(server.url, requests=50, connections=2)
            assert r.ok == 50 and r.status_codes == {200: 50}

        def test_catalog_echo(netbench, netbench_server):
            srv = netbench_server("asyncio_streams", app="echo")
            r = netbench.echo(srv.host, srv.port, requests=50, connections=2)
            assert r.ok == 50 and r.errors_total == 0

        def test_missing_interpreter(netbench_server):
            netbench_server("gevent", python="/nonexistent/python3")

        def test_unknown_name(netbench_server):
            netbench_server("no_such_server")
        """
    )
    result = pytester.runpytest_subprocess("--netbench", "-rs")
    result.assert_outcomes(passed=2, skipped=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*cannot start server 'no_such_server': the catalog has no server*",
            "*SKIPPED*server 'gevent' cannot run here:*/nonexistent/python3*",
        ]
    )


def test_a_misspelt_option_fails_the_test_with_the_closest_name(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(
        f"""
        def test_http(netbench, netbench_server):
            server = netbench_server({HELLO!r}, port_pattern={PORT_PATTERN!r})
            netbench.http(server, requests=10, conections=2)

        def test_echo_takes_a_server(netbench, netbench_server):
            server = netbench_server({HELLO!r}, port_pattern={PORT_PATTERN!r})
            netbench.echo(server, requests=10, framing="lines")

        def test_sweep(netbench, netbench_server):
            server = netbench_server({HELLO!r}, port_pattern={PORT_PATTERN!r})
            netbench.sweep(server, rates="10", duration=0.2, stop_p99=5)
        """
    )
    result = pytester.runpytest_subprocess("--netbench")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            "*unknown option 'conections' for an HTTP load: did you mean 'connections'?*",
            "*unknown framing*lines*",
            "*unknown option 'stop_p99' for an HTTP load: did you mean 'stop_p99_ms'?*",
        ],
        consecutive=False,
    )
