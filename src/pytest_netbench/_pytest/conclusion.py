"""The end of a netbench session: matrices, comparisons, files and the regression gate.

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
    from pytest_netbench._compare.gate import Comparison
    from pytest_netbench._report.matrix import Matrix


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
                from pytest_netbench._pytest.baselines import describe_ab

                parts.append(describe_ab(settings.ab_refs))
            parts += [render_comparison_text(c, width=width) for c in comparisons]
            nb.gate_failed = any(c.failed for c in comparisons)
        parts += _write_files(nb, matrices, comparisons)
    except (NetbenchError, OSError, ValueError) as exc:
        # A missing baseline or an unwritable path: say so and fail the session, but do
        # not bury the matrices already rendered under a traceback.
        parts.append(f"netbench: {exc}")
        nb.gate_failed = True
    nb.summary_text = "\n".join(p.rstrip("\n") for p in parts if p) + "\n"


def _comparisons(nb: NetbenchSession) -> list[Comparison]:
    from pytest_netbench._pytest.baselines import compare_ab, compare_with_stored

    settings = nb.settings
    out: list[Comparison] = []
    if settings.compare_requested:
        out.append(
            compare_with_stored(
                settings.storage_dir,
                settings.compare_name or None,
                nb.records,
                settings.compare_fail,
            )
        )
    if settings.ab_refs is not None:
        out.append(compare_ab(settings.ab_refs, nb.records, settings.compare_fail))
    return out


def _write_files(
    nb: NetbenchSession, matrices: Sequence[Matrix], comparisons: Sequence[Comparison]
) -> list[str]:
    settings = nb.settings
    notes: list[str] = []
    if settings.json_path:
        from pytest_netbench._pytest.outputs import write_json

        write_json(settings.json_path, nb.records)
        notes.append(f"netbench: results written to {settings.json_path}")
    if settings.markdown_path or os.environ.get("GITHUB_STEP_SUMMARY"):
        from pytest_netbench._compare.gate import render_comparison_markdown
        from pytest_netbench._report.markdown import (
            append_github_step_summary,
            render_markdown,
            write_markdown,
        )

        compared = "\n".join(render_comparison_markdown(c) for c in comparisons)
        text = render_markdown(matrices, comparison=compared or None)
        if settings.markdown_path:
            write_markdown(settings.markdown_path, text)
            notes.append(f"netbench: matrices written to {settings.markdown_path}")
        append_github_step_summary(text)
    if settings.benchmark_json_path:
        from pytest_netbench._pytest.outputs import write_benchmark_json

        write_benchmark_json(settings.benchmark_json_path, nb.records)
        notes.append(f"netbench: pytest-benchmark JSON written to {settings.benchmark_json_path}")
    if settings.save_name:
        # After comparing: saving first would make this run its own "latest" baseline.
        from pytest_netbench._pytest.baselines import save_run

        saved = save_run(settings.storage_dir, settings.save_name, nb.records)
        notes.append(f"netbench: run saved as {saved}")
    return notes


def _terminal_width(config: pytest.Config) -> int:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    width = getattr(getattr(reporter, "_tw", None), "fullwidth", 0)
    return int(width) if width else shutil.get_terminal_size().columns
