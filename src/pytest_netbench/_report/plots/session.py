"""Every picture of a session, written into one directory (``--netbench-plot DIR``).

- per load: its latency spectrum (``...-latency.png``; a mix's: a line per request kind and
  one of the whole load) and timeline (``...-timeline.png``);
- per test function with loads of several parametrisations: their spectra on one graph,
  the median trial of each (``<function>-latency.png``; up to ten lines);
- per test function with sweeps: the three sweep graphs, a line per sweep
  (``<function>-sweep.png``); and when sweeps come from several test functions, all of
  them on one set of graphs, a line per test and parametrisation (``all-sweep.png``, up to
  ten lines);
- per cold start: its curve (``...-cold_start.png``);
- per capacity search: its steps against each term of the SLO (``...-capacity.png``);
- per matrix and metric: the bar chart (``<function>-matrix-<metric>.png``).

Names come from :mod:`.naming`.
:func:`plot_result` draws one result's pictures the same way, for the command line.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._experiment.capacity import CapacityResult
from pytest_netbench._experiment.cold_start import ColdStartResult
from pytest_netbench._experiment.sweep import SweepResult
from pytest_netbench._experiment.trials import median_trial
from pytest_netbench._model import LoadResult
from pytest_netbench._report.matrix import Matrix, effective_params
from pytest_netbench._report.plots.canvas import save
from pytest_netbench._report.plots.capacity import capacity_figure
from pytest_netbench._report.plots.cold_start import cold_start_figure
from pytest_netbench._report.plots.load import (
    mix_spectrum_figure,
    spectrum_figure,
    timeline_figure,
)
from pytest_netbench._report.plots.matrix import matrix_figure
from pytest_netbench._report.plots.naming import (
    UniqueNames,
    function_stem,
    record_stem,
    safe_part,
)
from pytest_netbench._report.plots.sweep import sweep_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_LINES = 10  # more parametrisations than this: no combined spectrum (unreadable)


def plot_session(
    directory: str | os.PathLike[str],
    *,
    records: Sequence[Record] = (),
    experiments: Sequence[ExperimentRecord] = (),
    matrices: Sequence[Matrix] = (),
) -> list[Path]:
    """Draw every picture of the session into ``directory``; the paths written, in order."""
    root = Path(directory)
    names = UniqueNames()
    written = _loads(root, names, records)
    written += _experiments(root, names, experiments)
    for matrix in matrices:
        stem = function_stem(matrix.function)
        for metric in matrix.metrics:
            path = root / names.claim(stem, f"matrix-{metric}")
            written.append(save(matrix_figure(matrix, metric), path))
    return written


def plot_result(
    directory: str | os.PathLike[str],
    result: LoadResult | SweepResult | ColdStartResult | CapacityResult,
    *,
    stem: str = "",
    title: str = "",
) -> list[Path]:
    """The pictures of one result outside a session (``netbench ... --plot DIR``): a load's
    spectrum and timeline (``<stem>-latency.png``, ``<stem>-timeline.png``), a sweep's
    graphs (``sweep.png``), a cold start's curve (``cold_start.png``) or a capacity search's
    steps (``capacity.png``)."""
    root = Path(directory)
    names = UniqueNames()
    stem = safe_part(stem) if stem else ""
    if isinstance(result, SweepResult):
        return [save(sweep_figure([("", result)], title=title), root / names.claim(stem, "sweep"))]
    if isinstance(result, CapacityResult):
        path = root / names.claim(stem, "capacity")
        return [save(capacity_figure(result, title=title), path)]
    if isinstance(result, ColdStartResult):
        title += _validity(result.result)
        path = root / names.claim(stem, "cold_start")
        return [save(cold_start_figure(result, title=title), path)]
    title += _validity(result)
    written = []
    if result.latency_histogram:
        path = root / names.claim(stem, "latency")
        written.append(save(_spectrum_of(result, title=title), path))
    if result.timeline:
        path = root / names.claim(stem, "timeline")
        written.append(save(timeline_figure(result, title=title), path))
    return written


def describe(function: str, params: Mapping[str, str], trial: int | None = None) -> str:
    """A picture's title: ``test_get[server=tornado, connections=50] trial 2``."""
    text = function.rsplit("::", 1)[-1]
    if params:
        text += "[" + ", ".join(f"{k}={v}" for k, v in params.items()) + "]"
    if trial is not None:
        text += f" trial {trial + 1}"
    return text


def _validity(result: LoadResult) -> str:
    if result.valid:
        return ""
    reason = "; ".join(result.invalid_reasons) or "invalid"
    return "\n" + textwrap.shorten(f"INVALID: {reason}", 100, placeholder=" ...")


def _loads(root: Path, names: UniqueNames, records: Sequence[Record]) -> list[Path]:
    written: list[Path] = []
    groups: dict[str, dict[tuple[tuple[str, str], ...], list[Record]]] = {}
    for record in records:
        params = effective_params(record)
        groups.setdefault(record.function, {}).setdefault(tuple(params.items()), []).append(record)
    for function, by_params in groups.items():
        for key, trials in by_params.items():
            params = dict(key)
            for record in trials:
                trial = record.trial if len(trials) > 1 else None
                stem = record_stem(function, params, trial)
                title = describe(function, params, trial) + _validity(record.result)
                if record.result.latency_histogram:
                    path = root / names.claim(stem, "latency")
                    written.append(save(_spectrum_of(record.result, title=title), path))
                if record.result.timeline:
                    path = root / names.claim(stem, "timeline")
                    written.append(save(timeline_figure(record.result, title=title), path))
        if 1 < len(by_params) <= MAX_LINES:
            written.append(_combined_spectrum(root, names, function, by_params))
    return written


def _spectrum_of(result: LoadResult, *, title: str) -> Figure:
    """A load's spectrum; a mix's has a line per request kind beside the whole load's."""
    if result.by_request:
        return mix_spectrum_figure(result, title=title)
    return spectrum_figure([("", result)], title=title)


def _combined_spectrum(
    root: Path,
    names: UniqueNames,
    function: str,
    by_params: Mapping[tuple[tuple[str, str], ...], Sequence[Record]],
) -> Path:
    labels = _varying_labels([dict(key) for key in by_params])
    series = [
        (label, median_trial([r.result for r in trials]))
        for label, trials in zip(labels, by_params.values(), strict=True)
    ]
    series = [(label, result) for label, result in series if result.latency_histogram]
    title = describe(function, {})
    if any(len(trials) > 1 for trials in by_params.values()):
        title += ": the median trial of each"
    path = root / names.claim(function_stem(function), "latency")
    return save(spectrum_figure(series, title=title), path)


def _varying_labels(params: Sequence[Mapping[str, str]]) -> list[str]:
    """Each parametrisation by the parameters that differ between them."""
    names = list(dict.fromkeys(n for p in params for n in p))
    varying = [n for n in names if len({p.get(n, "-") for p in params}) > 1] or names
    return [", ".join(f"{n}={p.get(n, '-')}" for n in varying) for p in params]


def _experiments(
    root: Path, names: UniqueNames, experiments: Sequence[ExperimentRecord]
) -> list[Path]:
    written: list[Path] = []
    sweeps: dict[str, list[ExperimentRecord]] = {}
    for record in experiments:
        if record.kind == "sweep":
            sweeps.setdefault(record.function, []).append(record)
        elif record.kind == "capacity":
            params = effective_params(record)
            search = CapacityResult.from_dict(record.data)
            path = root / names.claim(record_stem(record.function, params), "capacity")
            title = describe(record.function, params)
            written.append(save(capacity_figure(search, title=title), path))
        elif record.kind == "cold_start":
            params = effective_params(record)
            result = ColdStartResult.from_dict(record.data)
            title = describe(record.function, params) + _validity(result.result)
            path = root / names.claim(record_stem(record.function, params), "cold_start")
            written.append(save(cold_start_figure(result, title=title), path))
    for function, group in sweeps.items():
        labels = _varying_labels([effective_params(r) for r in group])
        if len(group) == 1:
            labels = [""]
            title = describe(function, effective_params(group[0]))
        else:
            title = describe(function, {})
        lines = [
            (label, SweepResult.from_dict(r.data)) for label, r in zip(labels, group, strict=True)
        ]
        path = root / names.claim(function_stem(function), "sweep")
        written.append(save(sweep_figure(lines, title=title), path))
    every = [r for group in sweeps.values() for r in group]
    if len(sweeps) > 1 and len(every) <= MAX_LINES:
        lines = [
            (describe(r.function, effective_params(r)), SweepResult.from_dict(r.data))
            for r in every
        ]
        path = root / names.claim("all", "sweep")
        written.append(save(sweep_figure(lines, title="every sweep of the session"), path))
    return written
