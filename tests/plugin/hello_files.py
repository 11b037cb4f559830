"""The hello server's files for a plugin test's folder: hello_app.py, and a conftest whose
``hello`` factory starts it (the pytester runs' ``hello_app`` fixture, or a folder of its
own that a module's tests share)."""

from __future__ import annotations

import sys
from pathlib import Path

HELLO_APP = Path(__file__).with_name("hello_app.py")
# Used inside the generated test files: the command netbench_server starts.
HELLO_COMMAND = f"[{sys.executable!r}, 'hello_app.py', '--host', '{{host}}', '--port', '{{port}}']"
PORT_PATTERN = r"NETBENCH_LISTENING port=(\d+)"


def hello_conftest() -> str:
    """A conftest with the `hello` factory: ``hello(*extra)`` starts hello_app.py."""
    return f"""
import pytest

HELLO = {HELLO_COMMAND}


@pytest.fixture
def hello(netbench_server):
    def start(*extra):
        return netbench_server(HELLO + list(extra), port_pattern={PORT_PATTERN!r})
    return start
"""
