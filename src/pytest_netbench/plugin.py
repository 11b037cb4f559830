"""pytest-netbench's pytest plugin (the ``pytest11`` entry point).

Options, the ``netbench`` marker, hooks and fixture registration live here; the work is
done in :mod:`pytest_netbench._plugin`. Without ``--netbench`` the plugin only marks
performance tests skipped, so an ordinary test run pays for nothing else.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Generator

import pytest

from pytest_netbench._plugin.fixtures import (
    make_server_fixture,
    netbench,
    netbench_server,
    server,
)
from pytest_netbench._plugin.options import add_options, read_settings
from pytest_netbench._plugin.session import (
    LOCK_INPUT_KEY,
    SESSION_KEY,
    SKIP_REASON,
    NetbenchSession,
    get_session,
)

__all__ = ["make_server_fixture", "netbench", "netbench_server", "server"]

_NETBENCH_FIXTURES = frozenset({"netbench", "netbench_server"})


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_netbench._plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "netbench(metrics=None): a performance test; skipped unless pytest runs with"
        " --netbench; metrics=[...] are its matrix's metrics (default: --netbench-metrics)",
    )
    session = NetbenchSession.from_config(config, read_settings(config))
    config.stash[SESSION_KEY] = session
    if session.settings.pythons:
        from pytest_netbench._servers import interpreter_names

        interpreter_names.register(session.settings.pythons)
    if not session.settings.enabled:
        return
    config.pluginmanager.register(SessionHooks(config, session), "netbench-session")
    if not session.is_worker:
        config.pluginmanager.register(FinalLine(config, session), "netbench-final-line")
    if not session.is_worker and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistController(), "netbench-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None and session.settings.pythons:
        from pytest_netbench._servers import interpreter_names

        interpreter_names.unregister(session.settings.pythons)
    controller = config.pluginmanager.get_plugin("netbench-xdist")
    if isinstance(controller, XdistController):
        controller.remove_lock()


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    nb = get_session(config)
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if not _is_netbench_test(item):
            continue
        if item.get_closest_marker("netbench") is None:
            item.add_marker(pytest.mark.netbench)  # so `-m netbench` selects them too
        if not nb.settings.enabled:
            item.add_marker(skip)
    if nb.settings.enabled and nb.settings.ab_refs is not None:
        from pytest_netbench._plugin.servers import deselect_server_duplicates

        deselect_server_duplicates(config, items)


def _is_netbench_test(item: pytest.Item) -> bool:
    if item.get_closest_marker("netbench") is not None:
        return True
    names = set(getattr(item, "fixturenames", ()))
    if names & _NETBENCH_FIXTURES:
        return True
    from pytest_netbench._plugin.fixtures import uses_netbench_server_fixture

    return uses_netbench_server_fixture(item)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """Readable ids for server references given as dicts or specs (``server0`` tells nothing)."""
    from pytest_netbench._servers.spec import ServerSpec

    # Dicts only when they are surely server references, so other tests' ids stay as they are.
    if isinstance(val, ServerSpec) or (
        isinstance(val, dict) and ("command" in val or (argname == "server" and "name" in val))
    ):
        from pytest_netbench._plugin.servers import describe

        return describe(val)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if get_session(item.config).settings.enabled:
        from pytest_netbench._plugin.report_sections import add_report_sections

        add_report_sections(item, report)
    return report


class SessionHooks:
    """Hooks that need the config: collecting records, concluding, printing the summary."""

    def __init__(self, config: pytest.Config, session: NetbenchSession) -> None:
        self.config = config
        self.nb = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # The teardown report carries every property the test added; under xdist it reaches
        # the controller with them, so each record is collected exactly once.
        if report.when == "teardown" and report.user_properties:
            self.nb.collect(report.user_properties)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.nb.is_worker:
            return
        from pytest_netbench._plugin.conclusion import UNDETECTABLE_STATUS, conclude

        conclude(self.config, self.nb)
        if self.nb.gate_failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif self.nb.gate_cannot_tell and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = UNDETECTABLE_STATUS

    def pytest_report_header(self) -> list[str]:
        # The gate's settings, and thresholds below the noise floor, before the first load.
        from pytest_netbench._plugin.conclusion import gate_header

        return [] if self.nb.is_worker else gate_header(self.nb.settings)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.nb.is_worker or not self.nb.summary_text:
            return
        terminalreporter.write_sep("=", "netbench")
        terminalreporter.write(self.nb.summary_text)


class FinalLine:
    """After pytest's last line (``1 passed in 2.1s``, over exit status 1), the line a CI
    log ends with: a failed gate, a gate that cannot tell (exit status 10), or a session
    the netbench step failed, says so. Its wrapper is the outermost (tryfirst), so it
    finishes after the terminal's own."""

    def __init__(self, config: pytest.Config, session: NetbenchSession) -> None:
        self.config = config
        self.nb = session

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self) -> Generator[None, object, object]:
        result = yield
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.nb.final_line and reporter is not None:
            cannot_tell = self.nb.gate_cannot_tell and not self.nb.gate_failed
            reporter.write_sep(
                "=", self.nb.final_line, red=not cannot_tell, yellow=cannot_tell, bold=True
            )
        return result


class XdistController:
    """Hands every xdist worker the path of the lock that keeps load windows apart."""

    def __init__(self) -> None:
        fd, self.lock_path = tempfile.mkstemp(prefix="pytest-netbench-", suffix=".lock")
        os.close(fd)

    def pytest_configure_node(self, node: object) -> None:
        workerinput = getattr(node, "workerinput", None)
        if isinstance(workerinput, dict):
            workerinput[LOCK_INPUT_KEY] = self.lock_path

    def remove_lock(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.lock_path)
