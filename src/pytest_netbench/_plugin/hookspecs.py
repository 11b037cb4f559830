"""Hooks pytest-netbench offers to conftest files and other plugins.

Registered by :func:`pytest_netbench.plugin.pytest_addhooks`. Kept in a module of their
own because pytest takes every ``pytest_*`` function of a module given to
``add_hookspecs`` for a hook specification.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_netbench_update_json(config: pytest.Config, payload: dict[str, Any]) -> None:
    """Change the session JSON before it is written (``--netbench-json``) or stored
    (``--netbench-save``), as pytest-benchmark's ``pytest_benchmark_update_json`` does.

    ``payload`` holds ``schema``, ``name``, ``created``, ``environment`` and ``records``;
    change it in place, e.g. ``payload["ci"] = {"build": os.environ["BUILD_ID"]}``. Extra
    top-level fields are kept when the file is read back and ignored by comparisons.
    Called once per file, in the process that ends the session (the xdist controller).
    """
