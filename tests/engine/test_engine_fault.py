"""A bug inside the engine is raised as one, never counted against the server.

The fault is injected into the engine's own per-response callback, against a real server:
without the loop exception handler in the driver, uvloop and asyncio would log it, drop the
connection, and the run would report resets as if the server had misbehaved.
"""

from __future__ import annotations

import pytest
from servers import StartHttp

from pytest_netbench import http_load
from pytest_netbench._engine.asyncio_io.fused_http import FusedHttpConnection
from pytest_netbench._errors import EngineFault


@pytest.mark.parametrize("loop_name", ["uvloop", "asyncio"])
def test_an_exception_in_a_connection_callback_stops_the_run_as_an_engine_fault(
    http_server: StartHttp, monkeypatch: pytest.MonkeyPatch, loop_name: str
) -> None:
    if loop_name == "uvloop":
        pytest.importorskip("uvloop")
    server, app = http_server()

    def injected(self: FusedHttpConnection) -> None:
        raise RuntimeError("injected engine bug")

    monkeypatch.setattr(FusedHttpConnection, "on_message_complete", injected)
    with pytest.raises(EngineFault, match="injected engine bug") as caught:
        http_load(server.url, loop=loop_name, connections=2, duration=5.0)
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert "bug in pytest-netbench" in str(caught.value)
    assert app.seen.requests >= 1
