"""The HTML report of results measured outside a pytest session (``netbench ... --html``).

A command's results have no test around them, so each becomes a record of a test named
after the command: a load a :class:`Record`, a sweep, capacity search, cold start or
crosscheck an :class:`ExperimentRecord` of its kind. Several results are told apart by
their labels, which the matrix shows as the ``load`` parameter.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._model import LoadResult

if TYPE_CHECKING:
    from pytest_netbench._experiment.capacity import CapacityResult
    from pytest_netbench._experiment.cold_start import ColdStartResult
    from pytest_netbench._experiment.crosscheck import CrosscheckResult
    from pytest_netbench._experiment.sweep import SweepResult
    from pytest_netbench._host.environment import Environment

    AnyResult = LoadResult | SweepResult | CapacityResult | ColdStartResult | CrosscheckResult


def results_to_records(
    results: Sequence[AnyResult], *, name: str = "netbench", labels: Sequence[str] = ()
) -> tuple[list[Record], list[ExperimentRecord]]:
    """Records of a test called ``name``; ``labels`` (default ``1``, ``2``, ... when there
    are several results, none for one) name each result."""
    if labels and len(labels) != len(results):
        raise ValueError(f"{len(labels)} label(s) for {len(results)} result(s)")
    if not labels:
        labels = [str(i + 1) for i in range(len(results))] if len(results) > 1 else [""]
    loads: list[Record] = []
    experiments: list[ExperimentRecord] = []
    for result, label in zip(results, labels, strict=True):
        if isinstance(result, LoadResult):
            loads.append(Record(nodeid=name, function=name, params={}, result=result, label=label))
            continue
        data: Mapping[str, Any] = result.to_dict()
        experiments.append(
            ExperimentRecord(
                nodeid=name, function=name, params={}, kind=data["kind"], data=data, label=label
            )
        )
    return loads, experiments


def write_results_html(
    path: str | os.PathLike[str],
    results: AnyResult | Sequence[AnyResult],
    *,
    name: str = "netbench",
    labels: Sequence[str] = (),
    title: str = "",
    environment: Environment | Mapping[str, Any] | None = None,
    plots: bool = True,
) -> Path:
    """The report of one result or several, as ``netbench ... --html PATH`` writes it.

    ``name``: the heading the results go under (the command, e.g. ``netbench http URL``);
    ``title``: the page's title (default ``netbench results``); ``environment``: collected
    now when None. Pictures are included when matplotlib is installed.
    """
    from pytest_netbench._report.html.document import write_html_report

    many = results if isinstance(results, Sequence) else [results]
    loads, experiments = results_to_records(many, name=name, labels=labels)
    return write_html_report(
        path,
        records=loads,
        experiments=experiments,
        environment=environment,
        title=title or "netbench results",
        plots=plots,
        unit="command",
    )
