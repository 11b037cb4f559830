"""How an experiment runs one load: the injected runner, the base spec it varies, and
reruns of a load that the generator (not the server) made untrustworthy.

Experiments never call the engine themselves. They take a *runner*, a callable from a
:class:`LoadSpec` to a :class:`LoadResult`, so the plugin can wrap every load with its
measured-window lock and recording, and the CLI with live progress, without the
experiment knowing either. The default runner is the library's own ``run_spec``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from pytest_netbench._compare.records import discard_counts
from pytest_netbench._errors import SpecError
from pytest_netbench._input.options import check_names
from pytest_netbench._input.spec import http_spec
from pytest_netbench._load.api import Monitored, run_spec
from pytest_netbench._load.attempts import (
    Runner,
)
from pytest_netbench._model import LoadResult, LoadSpec


def default_runner(server: Monitored | None = None, cluster: object | None = None) -> Runner:
    """Loads run by the library from this process; ``server`` (a managed server) is
    sampled and checked for a crash during each load; ``cluster``: a Dask scheduler
    address or Client to run the shares on."""

    def run(spec: LoadSpec) -> LoadResult:
        return run_spec(spec, server, cluster=cluster)

    return run


def base_spec(
    url: str | LoadSpec, options: Mapping[str, Any], *, also: Collection[str] = ()
) -> LoadSpec:
    """The load an experiment starts from: an HTTP URL with ``http_load``'s options
    (checked here, before any traffic), or a checked spec as given. ``also``: the
    experiment's own option names, offered when an option is misspelt."""
    if isinstance(url, LoadSpec):
        if options:
            raise SpecError(
                f"options ({', '.join(sorted(options))}) go with a URL; for a LoadSpec, set"
                " them on the spec (dataclasses.replace)"
            )
        return url
    check_names("http", options, also=also)
    return http_spec(url, **options)


def own_options(function: Callable[..., object]) -> frozenset[str]:
    """The keyword options an experiment takes itself (the rest are its loads')."""
    return frozenset(
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    )


def open_loop_spec(spec: LoadSpec, rate: float) -> LoadSpec:
    """``spec`` at a fixed arrival rate (the steps of sweeps and capacity searches)."""
    if spec.pipeline != 1:
        raise SpecError(
            "rate steps are open loop, and pipelining is for closed loop: drop pipeline"
        )
    if spec.stages:
        raise SpecError(
            "each step holds one rate, and stages move it: drop stages (a load with stages"
            " is itself a ramp through rates: http_load(url, rate=0, stages=[...]))"
        )
    if not rate > 0:
        raise SpecError(f"a rate must be > 0, got {rate!r}")
    return dataclasses.replace(spec, rate=float(rate))


def discard_causes(discarded: Iterable[LoadResult]) -> dict[str, int]:
    """How many discarded runs each cause accounts for (a run may have several)."""
    # Counted where stored records count them too, so the two never disagree.
    return discard_counts(discarded)
