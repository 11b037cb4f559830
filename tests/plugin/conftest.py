"""Helpers for the plugin's end-to-end tests: tiny real HTTP servers the pytester runs load.

The servers (``hello_app.py`` beside this file, and the experiment tests' paced server of
known capacity) are copied into each pytester directory and started by the tests inside
that run (through ``netbench_server``), so every load crosses a real loopback socket to a
real subprocess.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hello_files import HELLO_APP, PORT_PATTERN, hello_conftest

PACED_SERVER = Path(__file__).parent.parent / "experiment" / "paced_server.py"
WARMING_SERVER = PACED_SERVER.with_name("warming_server.py")


@pytest.fixture
def hello_app(pytester: pytest.Pytester) -> Path:
    """Copy hello_app.py and write a conftest with a `hello` factory into the pytester dir."""
    path = pytester.path / "hello_app.py"
    shutil.copyfile(HELLO_APP, path)
    pytester.makeconftest(hello_conftest())
    return path


@pytest.fixture
def paced_app(pytester: pytest.Pytester) -> Path:
    """Copy the paced server (at most R responses/s, FIFO) and the warming one, and write a
    conftest with factories: ``paced(500)`` gives a started server of capacity 500 req/s,
    ``warming(200, 1000, 1.0)`` one that serves 200 req/s for its first second, then 1000."""
    path = pytester.path / "paced_server.py"
    shutil.copyfile(PACED_SERVER, path)
    shutil.copyfile(WARMING_SERVER, pytester.path / WARMING_SERVER.name)
    pytester.makeconftest(
        f"""
import sys

import pytest


@pytest.fixture
def paced(netbench_server):
    def start(rate):
        command = [sys.executable, "paced_server.py", str(rate), "{{port}}"]
        return netbench_server(command, port_pattern={PORT_PATTERN!r}, name="paced")
    return start


@pytest.fixture
def warming(netbench_server):
    def start(slow, fast, slow_for):
        command = [sys.executable, "warming_server.py", str(slow), str(fast), str(slow_for)]
        return netbench_server(command, port_pattern={PORT_PATTERN!r}, name="warming")
    return start
"""
    )
    return path
