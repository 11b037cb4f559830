"""A real Dask cluster (``LocalCluster``: a scheduler and two worker processes) for the
distributed transport's tests, and the loopback test servers they load."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the distributed extra is not installed")

sys.path.insert(0, str(Path(__file__).parents[1] / "engine"))  # the engine's test servers


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.Client]:
    local = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(local)
    try:
        yield client
    finally:
        client.close()
        local.close()


@pytest.fixture(autouse=True)
def _bounded(hang_guard: None) -> None:
    """No cluster test may hang the suite."""
