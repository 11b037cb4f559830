"""The files results go to, each behind one small interface.

Whoever ends a session (the plugin) or a command (``netbench``, through
:func:`command_outputs`) builds one :class:`SessionOutputs` and loops over
:data:`WRITERS`: each writer says whether the settings ask for it, writes what it renders
and returns lines for the terminal. A new output (an HTML report) is one more writer in
the list, not one more branch in the caller. Saving a run to ``.netbench`` is not
rendering and stays with the caller.

A command's one result has no test around it: its records are named after the command,
``--json`` writes the result's own document (``LoadResult.to_dict()``, a sweep's, the
verdicts of ``netbench compare``...) rather than a session's, its pictures are named
after the command (``http-latency.png``, ``sweep.png``), and it never goes to the GitHub
step summary on its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pytest_netbench._compare.gate import Comparison
from pytest_netbench._compare.records import (
    ExperimentRecord,
    Record,
    session_to_dict,
    write_json_atomically,
)
from pytest_netbench._host.environment import Environment, collect_environment
from pytest_netbench._report.benchmark_compat import write_benchmark_json
from pytest_netbench._report.check_tables import check_tables_markdown
from pytest_netbench._report.comparison import render_comparison_markdown
from pytest_netbench._report.discards import discard_notes, render_discards_markdown
from pytest_netbench._report.endings import endings_markdown
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
from pytest_netbench._report.matrix import Matrix, build_matrices
from pytest_netbench._report.phases import phase_tables_markdown
from pytest_netbench._report.profile_tables import profile_tables_markdown
from pytest_netbench._report.requests import request_tables_markdown
from pytest_netbench._report.sessions import sessions_markdown
from pytest_netbench._report.stream_tables import stream_tables_markdown

if TYPE_CHECKING:
    from pytest_netbench._experiment.capacity import CapacityResult
    from pytest_netbench._experiment.cold_start import ColdStartResult
    from pytest_netbench._experiment.crosscheck import CrosscheckResult
    from pytest_netbench._experiment.sweep import SweepResult
    from pytest_netbench._model import LoadResult

    CommandResult = (
        LoadResult | SweepResult | CapacityResult | ColdStartResult | CrosscheckResult | Comparison
    )

JsonAmender = Callable[[dict[str, Any]], None]

SESSION_TITLE = "pytest-netbench results"
COMMAND_TITLE = "netbench results"


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


@dataclass(frozen=True)
class CommandRun:
    """The one result a ``netbench`` command measured, where a session has its tests."""

    result: CommandResult
    name: str  # what its records are called, and the pictures' title: "netbench http URL"
    stem: str = ""  # the pictures' file names start with it: "http" gives http-latency.png


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
    # Set when a command, not a pytest session, measured the records (command_outputs).
    command: CommandRun | None = None
    _environment: Environment | None = field(default=None, repr=False)

    @property
    def title(self) -> str:
        """The page's and the Markdown's title."""
        return COMMAND_TITLE if self.command is not None else SESSION_TITLE

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

    def json_document(self) -> dict[str, Any]:
        """What ``--json`` writes: a command's result as its own document, else the
        session's."""
        if self.command is None:
            return self.session_json()
        result = self.command.result
        if isinstance(result, Comparison):
            from pytest_netbench._report.comparison import comparison_to_dict

            return comparison_to_dict(result)
        return result.to_dict()


def command_outputs(
    settings: OutputSettings, result: CommandResult, *, name: str, stem: str = ""
) -> SessionOutputs:
    """The outputs of one command's result: a comparison as itself, any other result as
    the records of a test called ``name`` (``results_to_records``, as the HTML page of
    results measured outside pytest has them)."""
    command = CommandRun(result=result, name=name, stem=stem)
    if isinstance(result, Comparison):
        return SessionOutputs(
            settings, records=(), matrices=(), comparisons=[result], command=command
        )
    from pytest_netbench._report.html.results import results_to_records

    records, experiments = results_to_records([result], name=name)
    return SessionOutputs(
        settings,
        records=records,
        matrices=build_matrices(records),
        experiments=experiments,
        command=command,
    )


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
        write_json_atomically(path, outputs.json_document())
        return [f"netbench: results written to {path}"]


class MarkdownWriter:
    name = "markdown"

    def wanted(self, settings: OutputSettings) -> bool:
        # A GitHub Actions step summary gets the Markdown even when no file was asked for.
        return bool(settings.markdown_path or os.environ.get(GITHUB_STEP_SUMMARY))

    def write(self, outputs: SessionOutputs) -> list[str]:
        path = outputs.settings.markdown_path
        summary = outputs.command is None  # a command writes the file it was asked for only
        if not path and not summary:
            return []
        compared = "\n".join(render_comparison_markdown(c) for c in outputs.comparisons)
        tables = build_experiment_tables(outputs.experiments)
        sections = [render_experiment_markdown(t) for t in tables]
        sections.append(
            render_discards_markdown(discard_notes(outputs.records, outputs.experiments))
        )
        text = render_markdown(
            outputs.matrices,
            title=outputs.title,
            comparison=compared or None,
            sections=sections,
            under_matrix={
                m.function: "\n".join(
                    part
                    for part in (
                        request_tables_markdown(outputs.records, m.function),
                        check_tables_markdown(outputs.records, m.function),
                        phase_tables_markdown(outputs.records, m.function),
                        stream_tables_markdown(outputs.records, m.function),
                        profile_tables_markdown(outputs.records, m.function),
                        sessions_markdown(outputs.records, m.function),
                        endings_markdown(outputs.records, m.function),
                    )
                    if part
                )
                for m in outputs.matrices
            },
        )
        if summary:
            append_github_step_summary(text)  # only when $GITHUB_STEP_SUMMARY is set
        if not path:
            return []
        write_markdown(path, text)
        what = "matrices" if outputs.matrices else "Markdown"
        return [f"netbench: {what} written to {path}"]


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
        from pytest_netbench._report.plots.session import plot_result, plot_session

        directory = outputs.settings.plot_dir
        assert directory is not None
        command = outputs.command
        if command is not None:
            pictures = plot_result(
                directory, _plotted(command.result), stem=command.stem, title=command.name
            )
            return [f"netbench: {len(pictures)} plot(s) drawn in {directory}"]
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
            title=outputs.title,
            unit="command" if outputs.command is not None else "test function",
        )
        return [f"netbench: HTML report written to {path}"]


def _plotted(
    result: CommandResult,
) -> LoadResult | SweepResult | ColdStartResult | CapacityResult:
    """A result :func:`~pytest_netbench._report.plots.session.plot_result` draws."""
    from pytest_netbench._experiment.crosscheck import CrosscheckResult

    if isinstance(result, Comparison | CrosscheckResult):
        raise TypeError(f"no pictures of a {type(result).__name__}")
    return result


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
