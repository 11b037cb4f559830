"""Fixtures shared by the examples.

- ``server``: re-declared module-scoped, so each server starts once and serves every
  connection count of a module; pytest orders the parametrised tests to keep one server
  up at a time.
- The write-up examples (``test_seed_*.py``) run at a fiftieth of their write-up's size by
  default; ``--netbench-scale 50`` multiplies every duration and request count back to it.
  What the library does not scale (connection counts, a sweep's list of rates) a module
  chooses itself: a module-level ``scaled_parameters(full_size)`` returning
  ``{"argnames": [values...]}`` parametrises its tests that take those arguments
  (``full_size`` is True from ``--netbench-scale 50``), and the ``full_size`` and
  ``netbench_scale`` fixtures tell a test.
- ``writeup``: lines a module wants under its write-up's heading at the end of the session
  (the tables the write-ups printed that are not a matrix: ab's percentile list, the
  crosscheck's ranking), printed after the matrices.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_netbench.plugin import make_server_fixture

# At --netbench-scale FULL_SIZE_SCALE every seed example runs at its write-up's size.
FULL_SIZE_SCALE = 50.0

server = make_server_fixture(scope="module")

_NOTES: dict[str, list[str]] = {}


def at_full_size(config: pytest.Config) -> bool:
    """Whether this session runs the examples at their write-ups' size."""
    return float(config.getoption("--netbench-scale")) >= FULL_SIZE_SCALE


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    chooser = getattr(metafunc.module, "scaled_parameters", None)
    if chooser is None:
        return
    for argnames, values in chooser(at_full_size(metafunc.config)).items():
        if all(name.strip() in metafunc.fixturenames for name in argnames.split(",")):
            metafunc.parametrize(argnames, values)


@pytest.fixture(scope="session")
def netbench_scale(pytestconfig: pytest.Config) -> float:
    """The session's ``--netbench-scale`` (1.0 by default)."""
    return float(pytestconfig.getoption("--netbench-scale"))


@pytest.fixture(scope="session")
def full_size(pytestconfig: pytest.Config) -> bool:
    """True under ``--netbench-scale 50`` or more: the write-ups' connection counts."""
    return at_full_size(pytestconfig)


@pytest.fixture(scope="module")
def writeup(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """``writeup(line)`` keeps a line for the end of the session, under the module's
    first docstring line, and prints it in the test's own output too (``-rP``, ``-s``)."""
    module = request.module
    heading = f"{request.path.name}: {(module.__doc__ or '').strip().splitlines()[0]}"

    def add(line: str) -> None:
        _NOTES.setdefault(heading, []).append(line)
        print(line)

    return add


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _NOTES:
        return
    terminalreporter.section("netbench examples: what the write-ups printed, rerun here")
    for heading, lines in _NOTES.items():
        terminalreporter.write_line(heading)
        terminalreporter.write_line("")
        for line in lines:
            terminalreporter.write_line(line)
        terminalreporter.write_line("")
