"""The files a session's results go to, each behind one small interface.

Whoever ends a session (the plugin today, the CLI later) builds one
:class:`SessionOutputs` and loops over :data:`WRITERS`: each writer says whether the
settings ask for it, writes what it renders and returns lines for the terminal. A new
output (an HTML report) is one more writer in the list, not one more branch in the caller.
Saving a run to ``.netbench`` is not rendering and stays with the caller.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_netbench._compare.gate import Comparison
from pytest_netbench._environment import Environment, collect_environment
from pytest_netbench._records import (
    ExperimentRecord,
    Record,
    session_to_dict,
    write_json_atomically,
)
from pytest_netbench._report.benchmark_compat import write_benchmark_json
from pytest_netbench._report.comparison import render_comparison_markdown
from pytest_netbench._report.discards import discard_notes, render_discards_markdown
from pytest_netbench._report.experiment_tables import (
    build_experiment_tables,
    render_experiment_markdown,
)
from pytest_netbench._report.markdown import (
    GITHUB_STEP_SUMMARY,
    append_github_step_summary,
    render_markdown,
    write_markdown,
)
from pytest_netbench._report.matrix import Matrix

JsonAmender = Callable[[dict[str, Any]], None]


class OutputSettings(Protocol):
    """Where the user asked for files; the plugin's ``Settings`` has these attributes."""

    @property
    def json_path(self) -> str | None: ...

    @property
    def markdown_path(self) -> str | None: ...

    @property
    def benchmark_json_path(self) -> str | None: ...

    @property
    def plot_dir(self) -> str | None: ...

    @property
    def html_path(self) -> str | None: ...


def _leave_as_is(payload: dict[str, Any]) -> None:
    return None


@dataclass
class SessionOutputs:
    """Everything a writer may render from one session."""

    settings: OutputSettings
    records: Sequence[Record]
    matrices: Sequence[Matrix]
    comparisons: Sequence[Comparison] = ()
    experiments: Sequence[ExperimentRecord] = ()
    # Changes the session JSON in place before it is written (the plugin's
    # pytest_netbench_update_json hook).
    amend_json: JsonAmender = _leave_as_is
    _environment: Environment | None = field(default=None, repr=False)

    def environment(self) -> Environment:
        """Collected on first use: it runs git, and most outputs never need it."""
        if self._environment is None:
            self._environment = collect_environment()
        return self._environment

    def session_json(self, *, name: str = "") -> dict[str, Any]:
        """The session document, amended, as ``--netbench-json`` and stored runs hold it."""
        payload = session_to_dict(
            self.records, self.environment(), name=name, experiments=self.experiments
        )
        self.amend_json(payload)
        return payload


class ReportWriter(Protocol):
    """One kind of output file."""

    @property
    def name(self) -> str: ...

    def wanted(self, settings: OutputSettings) -> bool:
        """Whether the settings ask for this output."""
        ...

    def write(self, outputs: SessionOutputs) -> list[str]:
        """Write the output; return lines telling the user where it went."""
        ...


class SessionJsonWriter:
    name = "json"

    def wanted(self, settings: OutputSettings) -> bool:
        return bool(settings.json_path)

    def write(self, outputs: SessionOutputs) -> list[str]:
        path = outputs.settings.json_path
        assert path is not None
        write_json_atomically(path, outputs.session_json())
        return [f"netbench: results written to {path}"]


class MarkdownWriter:
    name = "markdown"

    def wanted(self, settings: OutputSettings) -> bool:
        # A GitHub Actions step summary gets the Markdown even when no file was asked for.
        return bool(settings.markdown_path or os.environ.get(GITHUB_STEP_SUMMARY))

    def write(self, outputs: SessionOutputs) -> list[str]:
        compared = "\n".join(render_comparison_markdown(c) for c in outputs.comparisons)
        tables = build_experiment_tables(outputs.experiments)
        sections = [render_experiment_markdown(t) for t in tables]
        sections.append(
            render_discards_markdown(discard_notes(outputs.records, outputs.experiments))
        )
        text = render_markdown(outputs.matrices, comparison=compared or None, sections=sections)
        append_github_step_summary(text)  # only when $GITHUB_STEP_SUMMARY is set
        path = outputs.settings.markdown_path
        if not path:
            return []
        write_markdown(path, text)
        return [f"netbench: matrices written to {path}"]


class BenchmarkJsonWriter:
    name = "benchmark-json"

    def wanted(self, settings: OutputSettings) -> bool:
        return bool(settings.benchmark_json_path)

    def write(self, outputs: SessionOutputs) -> list[str]:
        path = outputs.settings.benchmark_json_path
        assert path is not None
        write_benchmark_json(path, outputs.records, outputs.environment())
        return [f"netbench: pytest-benchmark JSON written to {path}"]


class PlotWriter:
    name = "plot"

    def wanted(self, settings: OutputSettings) -> bool:
        return bool(settings.plot_dir)

    def write(self, outputs: SessionOutputs) -> list[str]:
        # Imported here: the pictures need the experiment layer and matplotlib, which no
        # other output does.
        from pytest_netbench._report.plots.session import plot_session

        directory = outputs.settings.plot_dir
        assert directory is not None
        pictures = plot_session(
            directory,
            records=outputs.records,
            experiments=outputs.experiments,
            matrices=outputs.matrices,
        )
        return [f"netbench: {len(pictures)} plot(s) drawn in {directory}"]


class HtmlWriter:
    name = "html"

    def wanted(self, settings: OutputSettings) -> bool:
        return bool(settings.html_path)

    def write(self, outputs: SessionOutputs) -> list[str]:
        # Imported here: only this output needs the page and, for its pictures, matplotlib.
        from pytest_netbench._report.html import write_html_report

        path = outputs.settings.html_path
        assert path is not None
        write_html_report(
            path,
            records=outputs.records,
            experiments=outputs.experiments,
            matrices=outputs.matrices,
            comparisons=outputs.comparisons,
            environment=outputs.environment(),
        )
        return [f"netbench: HTML report written to {path}"]


# In the order their notes are printed.
WRITERS: tuple[ReportWriter, ...] = (
    SessionJsonWriter(),
    MarkdownWriter(),
    BenchmarkJsonWriter(),
    PlotWriter(),
    HtmlWriter(),
)


def write_outputs(writers: Sequence[ReportWriter], outputs: SessionOutputs) -> list[str]:
    """Every output the settings ask for, in order; the notes of all of them."""
    notes: list[str] = []
    for writer in writers:
        if writer.wanted(outputs.settings):
            notes += writer.write(outputs)
    return notes
