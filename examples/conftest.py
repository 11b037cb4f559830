"""Fixtures for the example comparison.

The ``server`` fixture is re-declared module-scoped, so each server starts once and serves
every connection count; pytest orders the parametrised tests to keep one server up at a time.
"""

from __future__ import annotations

from pytest_netbench.plugin import make_server_fixture

server = make_server_fixture(scope="module")
