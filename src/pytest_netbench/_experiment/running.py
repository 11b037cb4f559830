"""How an experiment runs one load: the injected runner, the base spec it varies, and
reruns of a load that the generator (not the server) made untrustworthy.

Experiments never call the engine themselves. They take a *runner*, a callable from a
:class:`LoadSpec` to a :class:`LoadResult`, so the plugin can wrap every load with its
measured-window lock and recording, and the CLI with live progress, without the
experiment knowing either. The default runner is the library's own ``run_spec``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netbench._api import Monitored, run_spec
from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadResult, LoadSpec
from pytest_netbench._records import discard_counts
from pytest_netbench._spec import http_spec

Runner = Callable[[LoadSpec], LoadResult]

# A trial invalid for generator-side causes only is run again this many times by default.
DEFAULT_RETRIES = 2


def default_runner(server: Monitored | None = None, cluster: object | None = None) -> Runner:
    """Loads run by the library from this process; ``server`` (a managed server) is
    sampled and checked for a crash during each load; ``cluster``: a Dask scheduler
    address or Client to run the shares on."""

    def run(spec: LoadSpec) -> LoadResult:
        return run_spec(spec, server, cluster=cluster)

    return run


def base_spec(target: LoadSpec | str, options: Mapping[str, Any]) -> LoadSpec:
    """The load an experiment starts from: a checked spec as given, or an HTTP URL with
    ``http_load``'s options (checked here, before any traffic)."""
    if isinstance(target, LoadSpec):
        if options:
            raise SpecError(
                f"options ({', '.join(sorted(options))}) go with a URL; for a LoadSpec, set"
                " them on the spec (dataclasses.replace)"
            )
        return target
    return http_spec(target, **options)


def open_loop_spec(spec: LoadSpec, rate: float) -> LoadSpec:
    """``spec`` at a fixed arrival rate (the steps of sweeps and capacity searches)."""
    if spec.pipeline != 1:
        raise SpecError(
            "rate steps are open loop, and pipelining is for closed loop: drop pipeline"
        )
    if not rate > 0:
        raise SpecError(f"a rate must be > 0, got {rate!r}")
    return dataclasses.replace(spec, rate=float(rate))


@dataclass(frozen=True, slots=True)
class Attempts:
    """One load as asked for: the result kept, and the runs thrown away before it because
    only the generator was to blame (its CPU, its schedule, its file descriptors)."""

    kept: LoadResult
    discarded: tuple[LoadResult, ...] = ()

    @property
    def runs(self) -> int:
        return len(self.discarded) + 1

    @property
    def generator_limited(self) -> bool:
        """Every attempt was invalid for generator-side causes only: the load could not be
        produced, so nothing can be concluded about the server from it."""
        return self.kept.invalid_by_generator_only

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept": self.kept.to_dict(),
            "discarded": [r.to_dict() for r in self.discarded],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempts:
        return cls(
            kept=LoadResult.from_dict(data["kept"]),
            discarded=tuple(LoadResult.from_dict(r) for r in data.get("discarded", ())),
        )


def run_with_retries(spec: LoadSpec, runner: Runner, retries: int = DEFAULT_RETRIES) -> Attempts:
    """Run ``spec``; while the result is invalid only because of the generator, run it
    again, at most ``retries`` more times. A result invalid for any server-side cause
    (the server died, the pool filled up while it held requests) is kept at once: running
    it again would only repeat what the server did. An interrupted load (Ctrl-C) is never
    run again."""
    check_retries(retries)
    discarded: list[LoadResult] = []
    result = runner(spec)
    while result.invalid_by_generator_only and not result.interrupted and len(discarded) < retries:
        discarded.append(result)
        result = runner(spec)
    return Attempts(result, tuple(discarded))


def check_retries(retries: int) -> None:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise SpecError(f"retries must be a whole number >= 0, got {retries!r}")


def discard_causes(discarded: Iterable[LoadResult]) -> dict[str, int]:
    """How many discarded runs each cause accounts for (a run may have several)."""
    # Counted where stored records count them too, so the two never disagree.
    return discard_counts(discarded)
