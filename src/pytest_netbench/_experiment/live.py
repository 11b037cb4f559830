"""An experiment's live side: progress reports labelled with the step, and stopping early.

The default runner's loads report :class:`LoadProgress` marked with the experiment's step
(``step 3/20, 600 req/s``) and watch the :class:`StopSignal`, so a stop ends the load that
is running. A runner of the caller's own reports its own progress (the plugin's does not),
but a stop is still seen between loads. An experiment that is stopped returns the steps
done so far, the last one with ``interrupted`` set if it was cut short.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_netbench._errors import SpecError
from pytest_netbench._load.api import Monitored, run_spec
from pytest_netbench._load.attempts import Runner
from pytest_netbench._model import LoadResult, LoadSpec
from pytest_netbench._model.live import LoadProgress, ProgressCallback, StopSignal, labelled


class ExperimentLive:
    """The progress callback and stop signal of one experiment, ``steps`` long (None when
    the number of steps is not known in advance, as in a capacity search)."""

    def __init__(
        self,
        progress: ProgressCallback | None,
        stop: StopSignal | None,
        steps: int | None,
    ) -> None:
        self.progress = progress
        self.stop = stop
        self.steps = steps
        self._current: Callable[[LoadProgress], None] | None = progress

    def runner(
        self, runner: Runner | None, server: Monitored | None, cluster: object | None = None
    ) -> Runner:
        """The runner to use: the caller's, or the library's wired to this experiment (its
        loads' shares on a Dask ``cluster`` when one is given)."""
        if runner is None:

            def run(spec: LoadSpec) -> LoadResult:
                return run_spec(
                    spec, server, progress=self._current, stop=self.stop, cluster=cluster
                )

            return run
        if server is not None:
            raise SpecError("pass either runner or server: a runner samples its own server")
        if cluster is not None:
            raise SpecError(
                "cluster= reaches the loads of the default runner only: a runner of your own"
                " runs its loads where it likes (drop cluster=, or runner=)"
            )
        if self.progress is not None:
            raise SpecError(
                "progress= reaches the loads of the default runner only: a runner of your"
                " own reports its own progress (drop progress=, or runner=)"
            )
        return runner

    def begin(self, step: int, label: str) -> None:
        """The loads from now on belong to ``step`` (from 1), e.g. ``"600 req/s"``."""
        if self.progress is not None:
            self._current = labelled(self.progress, step, self.steps, label)

    @property
    def stop_requested(self) -> bool:
        return self.stop is not None and self.stop.requested
