"""A load's server profile, taken in a run of its own after the measured one
(``profile=True``): the measured figures are never those of a sampled server."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Protocol

from pytest_netbench._model import LoadResult, LoadSpec, ServerProfile
from pytest_netbench._public import publish


class Profiling(Protocol):
    """A profiler sampling the server's stacks (``Server.profiler()``)."""

    def stop(self) -> ServerProfile: ...


def with_profile(
    spec: LoadSpec,
    server: object | None,
    measured: LoadResult,
    run: Callable[[LoadSpec], LoadResult],
) -> LoadResult:
    """``measured``, with the server's profile taken in one more run of ``spec`` of its
    own (the measured figures are never those of a sampled server); why there is none, in
    one line, when it cannot be taken (``ServerProfile.problem``)."""
    start: Callable[[], Profiling] | None = getattr(server, "profiler", None)
    if start is None:
        return dataclasses.replace(
            measured,
            profile=ServerProfile(
                problem="profile=True needs a server netbench started or watches (server=):"
                " no profile taken"
            ),
        )
    profiler = start()
    try:
        profiled = run(spec)
    finally:
        profile = profiler.stop()
    profile = dataclasses.replace(
        profile,
        ok=profiled.ok,
        cpu_ms_per_request=_cpu_per_request(profiled, profile.tool),
        measured_cpu_ms_per_request=_cpu_per_request(measured, profile.tool),
    )
    return dataclasses.replace(measured, profile=profile)


def _cpu_per_request(result: LoadResult, tool: str) -> float:
    """The server CPU per request a profile's samples share: py-spy samples the Python
    code holding the GIL, which runs in user time; perf samples user and kernel stacks."""
    server = result.server
    if server is None:
        return math.nan
    return server.cpu_user_ms_per_request if tool == "py-spy" else server.cpu_ms_per_request


publish(globals())
