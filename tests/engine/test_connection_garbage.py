"""A closed connection is freed by its refcount, not left to the cyclic GC.

With a new connection per request a connection, its framer and the response parser that
calls back into it used to form a reference cycle per request; finding them took the
cyclic GC about a tenth of a load's CPU (issue 19). Counted here by type: the engine's
objects that only a GC pass would have freed, after a load of a few hundred connections.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator

import httptools
import pytest
from servers import StartHttp

from pytest_netbench import LoadResult, http_load

Check = Callable[[LoadResult], LoadResult]
REQUESTS = 300


@pytest.fixture
def cyclic_garbage() -> Iterator[Callable[[], Counter[str]]]:
    """Returns a function that collects and names the engine's objects found in cycles
    since the fixture started (the GC is off meanwhile, so nothing is freed unseen)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)

    def found() -> Counter[str]:
        gc.collect()
        engine = Counter(
            type(o).__qualname__
            for o in gc.garbage
            if type(o).__module__.startswith(("pytest_netbench", "httptools"))
            or isinstance(o, httptools.HttpResponseParser)
        )
        gc.garbage.clear()
        return engine

    try:
        yield found
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("requests_per_connection", [1, 3])
def test_http_connections_leave_no_cycles(
    loop: str,
    consistent: Check,
    http_server: StartHttp,
    cyclic_garbage: Callable[[], Counter[str]],
    method: str,
    requests_per_connection: int,
) -> None:
    server, _ = http_server()
    r = consistent(
        http_load(
            server.url,
            connections=5,
            requests=REQUESTS,
            method=method,
            requests_per_connection=requests_per_connection,
            loop=loop,
        )
    )
    assert r.ok == REQUESTS
    leftovers = cyclic_garbage()
    # The run's own objects (one of each) may end in cycles; one per connection may not:
    # no class may leave more than a few.
    most = max(leftovers.values(), default=0)
    assert most < REQUESTS // requests_per_connection // 10, leftovers
