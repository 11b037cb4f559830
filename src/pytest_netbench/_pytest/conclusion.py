"""The end of a netbench session: matrices, comparisons, files and the regression gate.

Runs once, in the process that received every report (the xdist controller or the single
process), and leaves the text for the terminal summary in ``session.summary_text``. The
formats (matrix, Markdown, JSON, pytest-benchmark) and the verdicts (thresholds,
significance) belong to the report and compare layers; this module decides what is
compared with what -- a stored run, or in A/B mode each test's HEAD trials with its BASE
trials from this same session -- and where things are written.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import pytest

from pytest_netbench._pytest.session import ARM_PARAM, NetbenchSession

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_netbench._compare.gate import Comparison, Threshold
    from pytest_netbench._model import LoadResult
    from pytest_netbench._report.environment import Environment
    from pytest_netbench._report.matrix import Matrix, Record


def conclude(config: pytest.Config, nb: NetbenchSession) -> None:
    from pytest_netbench._errors import NetbenchError

    settings = nb.settings
    if not nb.records:
        if settings.save_name or settings.compare_requested or settings.json_path:
            nb.summary_text = "netbench: no loads were recorded in this session; nothing saved\n"
        return
    width = _terminal_width(config)
    parts: list[str] = []
    try:
        from pytest_netbench._report.matrix import build_matrices, render_all_text

        matrices = build_matrices(
            nb.records, metrics=settings.columns, baseline=settings.baseline_column
        )
        parts.append(render_all_text(matrices, width=width))
        comparisons = _comparisons(nb)
        if comparisons:
            from pytest_netbench._compare.gate import render_comparison_text

            if settings.ab_refs is not None:
                parts.append(_describe_ab(settings.ab_refs))
            parts += [render_comparison_text(c, width=width) for c in comparisons]
            nb.gate_failed = any(c.failed for c in comparisons)
        parts += _write_files(nb, matrices, comparisons)
    except (NetbenchError, OSError, ValueError) as exc:
        # A missing baseline or an unwritable path: say so and fail the session, but do
        # not bury the matrices already rendered under a traceback.
        parts.append(f"netbench: {exc}")
        nb.gate_failed = True
    nb.summary_text = "\n".join(p.rstrip("\n") for p in parts if p) + "\n"


# -- comparisons -------------------------------------------------------------------------------
def _comparisons(nb: NetbenchSession) -> list[Comparison]:
    settings = nb.settings
    out: list[Comparison] = []
    if settings.compare_requested:
        out.append(
            _compare_with_stored(
                settings.storage_dir,
                settings.compare_name or None,
                nb.records,
                settings.compare_fail,
            )
        )
    if settings.ab_refs is not None:
        out.append(_compare_ab(nb.records, settings.compare_fail))
    return out


def _thresholds(spec: str | None) -> list[Threshold]:
    from pytest_netbench._compare.gate import parse_thresholds

    return parse_thresholds(spec) if spec else []


def _compare_with_stored(
    root: str, ref: str | None, records: Sequence[Record], gate: str | None
) -> Comparison:
    """This run against a stored one (``ref``: name, number, path, or None for the latest)."""
    from pytest_netbench._compare.gate import compare_runs
    from pytest_netbench._compare.storage import Storage

    baseline = Storage(root).load(ref)
    label = baseline.path.name if baseline.path is not None else baseline.name
    return compare_runs(records, baseline.records, _thresholds(gate), baseline_name=label)


@dataclass
class _ArmPair:
    """One test's (function, parameters, label) trials on each arm."""

    title: str
    base: list[LoadResult] = field(default_factory=list)
    head: list[LoadResult] = field(default_factory=list)


def _pair_arms(records: Iterable[Record]) -> list[_ArmPair]:
    pairs: dict[tuple[str, tuple[tuple[str, str], ...], str], _ArmPair] = {}
    for record in records:
        arm = record.params.get(ARM_PARAM)
        if arm not in ("base", "head"):
            continue
        others = tuple(sorted((k, str(v)) for k, v in record.params.items() if k != ARM_PARAM))
        key = (record.function, others, record.label)
        if key not in pairs:
            pairs[key] = _ArmPair(_pair_title(record.function, others, record.label))
        getattr(pairs[key], str(arm)).append(record.result)
    return [p for p in pairs.values() if p.base and p.head]


def _pair_title(function: str, params: tuple[tuple[str, str], ...], label: str) -> str:
    name = function.rsplit("::", 1)[-1]
    extra = [f"{k}={v}" for k, v in params] + ([label] if label else [])
    return f"{name}[{', '.join(extra)}]" if extra else name


def _compare_ab(records: Sequence[Record], gate: str | None) -> Comparison:
    """Each test's HEAD trials against its BASE trials from this same session."""
    from pytest_netbench._compare.gate import Comparison, compare_results

    limits = _thresholds(gate)
    items = []
    for pair in _pair_arms(records):
        items += compare_results(pair.title, pair.head, pair.base, limits)
    return Comparison(
        items=tuple(items),
        baseline_name="BASE (A/B: HEAD and BASE in interleaved trials, this session)",
        thresholds=tuple(limits),
    )


def _describe_ab(refs: tuple[str, str]) -> str:
    return f"A/B mode: BASE = {refs[0]}\n          HEAD = {refs[1]}\n"


# -- files -------------------------------------------------------------------------------------
@cache
def _environment() -> Environment:
    from pytest_netbench._report.environment import collect_environment

    return collect_environment()


def _write_files(
    nb: NetbenchSession, matrices: Sequence[Matrix], comparisons: Sequence[Comparison]
) -> list[str]:
    settings = nb.settings
    notes: list[str] = []
    if settings.json_path:
        from pytest_netbench._report.jsonfile import write_session_json

        write_session_json(settings.json_path, nb.records, _environment())
        notes.append(f"netbench: results written to {settings.json_path}")
    if settings.markdown_path or os.environ.get("GITHUB_STEP_SUMMARY"):
        notes += _write_markdown(settings.markdown_path, matrices, comparisons)
    if settings.benchmark_json_path:
        from pytest_netbench._report.benchmark_compat import write_benchmark_json

        write_benchmark_json(settings.benchmark_json_path, nb.records, _environment())
        notes.append(f"netbench: pytest-benchmark JSON written to {settings.benchmark_json_path}")
    if settings.plot_dir:
        from pytest_netbench._report.plot import plot_matrices

        pictures = plot_matrices(matrices, settings.plot_dir)
        notes.append(f"netbench: {len(pictures)} plot(s) drawn in {settings.plot_dir}")
    if settings.save_name:
        # After comparing: saving first would make this run its own "latest" baseline.
        saved = _save(settings.storage_dir, settings.save_name, nb.records)
        notes.append(f"netbench: run saved as {saved}")
    return notes


def _write_markdown(
    path: str | None, matrices: Sequence[Matrix], comparisons: Sequence[Comparison]
) -> list[str]:
    from pytest_netbench._compare.gate import render_comparison_markdown
    from pytest_netbench._report.markdown import (
        append_github_step_summary,
        render_markdown,
        write_markdown,
    )

    compared = "\n".join(render_comparison_markdown(c) for c in comparisons)
    text = render_markdown(matrices, comparison=compared or None)
    append_github_step_summary(text)  # only when $GITHUB_STEP_SUMMARY is set
    if not path:
        return []
    write_markdown(path, text)
    return [f"netbench: matrices written to {path}"]


def _save(root: str, name: str, records: Sequence[Record]) -> Path:
    from pytest_netbench._compare.storage import Storage

    return Storage(root).save(records, name, _environment()).path


def _terminal_width(config: pytest.Config) -> int:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    width = getattr(getattr(reporter, "_tw", None), "fullwidth", 0)
    return int(width) if width else shutil.get_terminal_size().columns
