"""The end of a netbench session: matrices, files, stored runs and the regression gate.

Runs once, in the process that received every report (the xdist controller or the single
process), and leaves the text for the terminal summary in ``session.summary_text``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

from pytest_netbench._pytest.session import NetbenchSession

if TYPE_CHECKING:
    from pytest_netbench._report.matrix import Matrix, Record


def conclude(config: pytest.Config, nb: NetbenchSession) -> None:
    from pytest_netbench._errors import NetbenchError

    settings = nb.settings
    parts: list[str] = []
    if not nb.records:
        if settings.save_name or settings.compare_requested or settings.json_path:
            parts.append("netbench: no loads were recorded in this session.\n")
        nb.summary_text = "".join(parts)
        return
    try:
        matrices = _matrices(nb.records, settings.columns, settings.baseline_column)
        from pytest_netbench._report.matrix import render_all_text

        parts.append(render_all_text(matrices, width=_terminal_width(config)))
        parts += _write_files(nb, matrices)
        parts += _compare(nb)
    except (NetbenchError, OSError, ValueError) as exc:
        parts.append(f"netbench: {exc}\n")
        nb.gate_failed = True
    nb.summary_text = "\n".join(p.rstrip("\n") for p in parts if p) + "\n"


def _matrices(
    records: Sequence[Record], columns: Sequence[str], baseline: str | None
) -> list[Matrix]:
    from pytest_netbench._report.matrix import build_matrices

    return build_matrices(records, metrics=columns, baseline=baseline)


def _write_files(nb: NetbenchSession, matrices: Sequence[Matrix]) -> list[str]:
    settings = nb.settings
    notes: list[str] = []
    if settings.json_path:
        from pytest_netbench._pytest.outputs import write_json

        write_json(settings.json_path, nb.records)
        notes.append(f"netbench: results written to {settings.json_path}")
    if settings.markdown_path or os.environ.get("GITHUB_STEP_SUMMARY"):
        from pytest_netbench._report.markdown import (
            append_github_step_summary,
            render_markdown,
            write_markdown,
        )

        text = render_markdown(matrices)
        if settings.markdown_path:
            write_markdown(settings.markdown_path, text)
            notes.append(f"netbench: matrices written to {settings.markdown_path}")
        append_github_step_summary(text)
    if settings.benchmark_json_path:
        from pytest_netbench._pytest.outputs import write_benchmark_json

        write_benchmark_json(settings.benchmark_json_path, nb.records)
        notes.append(f"netbench: pytest-benchmark JSON written to {settings.benchmark_json_path}")
    if settings.save_name:
        from pytest_netbench._pytest.baselines import save_run

        path = save_run(settings.storage_dir, settings.save_name, nb.records)
        notes.append(f"netbench: run saved as {path}")
    return notes


def _compare(nb: NetbenchSession) -> list[str]:
    settings = nb.settings
    out: list[str] = []
    if settings.compare_requested:
        from pytest_netbench._pytest.baselines import compare_with_stored

        text, failed = compare_with_stored(
            settings.storage_dir,
            settings.compare_name or None,
            nb.records,
            settings.compare_fail,
        )
        out.append(text)
        nb.gate_failed |= failed
    if settings.ab_refs is not None:
        from pytest_netbench._pytest.baselines import compare_ab

        text, failed = compare_ab(settings.ab_refs, nb.records, settings.compare_fail)
        out.append(text)
        nb.gate_failed |= failed
    return out


def _terminal_width(config: pytest.Config) -> int:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    width = getattr(getattr(reporter, "_tw", None), "fullwidth", 0)
    return int(width) if width else shutil.get_terminal_size().columns
