"""The end of a netbench session: matrices, comparisons, files and the regression gate.

Runs once, in the process that received every report (the xdist controller or the single
process), and leaves the text for the terminal summary in ``session.summary_text``. The
formats (matrix, Markdown, JSON, pytest-benchmark, plots) and the verdicts (thresholds,
significance) belong to the report and compare layers; this module decides what is
compared with what -- a stored run, or in A/B mode each test's HEAD trials with its BASE
trials from this same session -- hands the results to every report writer the settings ask
for, and then stores the run.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import pytest

from pytest_netbench._plugin.session import ARM_PARAM, NetbenchSession

# The session's exit status when no gated metric regressed but one is undetectable here:
# the gate cannot tell. The number `netbench compare` exits with in that case
# (ExitCode.UNDETECTABLE; a test holds the two equal): neither 0 (passed) nor 1 (failed).
UNDETECTABLE_STATUS = 10

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_netbench._compare.gate import Comparison, Threshold
    from pytest_netbench._compare.noise import MetricNoise
    from pytest_netbench._compare.records import ExperimentRecord, Record
    from pytest_netbench._plugin.options import Settings
    from pytest_netbench._report.matrix import Matrix
    from pytest_netbench._report.writers import SessionOutputs


class _ArmedRecord(Protocol):
    """What pairing by arm reads of a record, load or experiment."""

    @property
    def function(self) -> str: ...

    @property
    def params(self) -> Mapping[str, object]: ...

    @property
    def label(self) -> str: ...


Measured = TypeVar("Measured", bound=_ArmedRecord)


def conclude(config: pytest.Config, nb: NetbenchSession) -> None:
    from pytest_netbench._errors import NetbenchError

    settings = nb.settings
    if not nb.records and not nb.experiments:
        if settings.save_name or settings.compare_requested or settings.json_path:
            nb.summary_text = "netbench: no loads were recorded in this session; nothing saved\n"
        return
    width = _terminal_width(config)
    parts: list[str] = []
    try:
        from pytest_netbench._report.check_tables import check_tables_text
        from pytest_netbench._report.discards import discard_notes, render_discards_text
        from pytest_netbench._report.experiment_tables import (
            build_experiment_tables,
            render_all_experiments_text,
        )
        from pytest_netbench._report.matrix import build_matrices, render_text
        from pytest_netbench._report.phases import phase_tables_text
        from pytest_netbench._report.profile_tables import profile_tables_text
        from pytest_netbench._report.requests import request_tables_text
        from pytest_netbench._report.stream_tables import stream_tables_text

        matrices = build_matrices(
            nb.records, metrics=settings.columns, baseline=settings.baseline_column
        )
        # Each test's matrix, and under it a table per request kind of each load with a mix.
        parts.append(
            "\n".join(
                render_text(m, width=width)
                + request_tables_text(nb.records, m.function, width=width)
                + check_tables_text(nb.records, m.function)
                + phase_tables_text(nb.records, m.function)
                + stream_tables_text(nb.records, m.function)
                + profile_tables_text(nb.records, m.function, width=width)
                for m in matrices
            )
        )
        tables = build_experiment_tables(nb.experiments)
        parts.append(render_all_experiments_text(tables, width=width))
        parts.append(render_discards_text(discard_notes(nb.records, nb.experiments), width=width))
        comparisons = _comparisons(nb)
        if comparisons:
            from pytest_netbench._report.comparison import (
                gate_result_line,
                render_comparison_text,
            )

            if settings.ab_mode:
                parts.append(_describe_ab(settings))
            parts += [render_comparison_text(c, width=width) for c in comparisons]
            failed = [c for c in comparisons if c.failed]
            nb.gate_failed = bool(failed)
            if failed:
                nb.final_line = "netbench: " + "; ".join(gate_result_line(c) for c in failed)
            elif any(c.cannot_tell for c in comparisons):
                # Neither a regression nor a pass: the session exits UNDETECTABLE_STATUS, and
                # the last line of the log says why, with what to gate instead.
                nb.gate_cannot_tell = True
                nb.final_line = "netbench: " + "; ".join(
                    [gate_result_line(c) for c in comparisons if c.cannot_tell]
                    + [f"{i.key}: {i.note}" for c in comparisons for i in c.undetectable]
                )
        parts += _write_files(config, nb, matrices, comparisons)
    except (NetbenchError, OSError, ValueError) as exc:
        # A missing baseline or an unwritable path: say so and fail the session, but do
        # not bury the matrices already rendered under a traceback.
        parts.append(f"netbench: {exc}")
        nb.gate_failed = True
        nb.final_line = f"netbench FAILED the session: {exc}"
    nb.summary_text = "\n".join(p.rstrip("\n") for p in parts if p) + "\n"


# -- comparisons -------------------------------------------------------------------------------
def _comparisons(nb: NetbenchSession) -> list[Comparison]:
    settings = nb.settings
    out: list[Comparison] = []
    if settings.compare_requested:
        out.append(
            _compare_with_stored(
                settings.storage_dir, settings.compare_name or None, nb, settings.compare_fail
            )
        )
    if settings.ab_mode:
        out.append(_compare_ab(nb.records, nb.experiments, settings))
    return out


def _thresholds(spec: str | None) -> list[Threshold]:
    from pytest_netbench._compare.gate import parse_thresholds

    return parse_thresholds(spec) if spec else []


def _compare_with_stored(
    root: str, ref: str | None, nb: NetbenchSession, gate: str | None
) -> Comparison:
    """This run against a stored one (``ref``: name, number, path, or None for the latest)."""
    from pytest_netbench._compare.gate import compare_runs
    from pytest_netbench._compare.storage import Storage
    from pytest_netbench._plugin.sequential_trials import gate_rule

    baseline = Storage(root).load(ref)
    label = baseline.path.name if baseline.path is not None else baseline.name
    return compare_runs(
        nb.records,
        baseline.records,
        _thresholds(gate),
        rule=gate_rule(nb.settings),
        baseline_name=label,
        current_experiments=nb.experiments,
        baseline_experiments=baseline.experiments,
        noise=_stored_noise(nb.settings),
    )


def _stored_noise(settings: Settings) -> dict[str, MetricNoise]:
    """Each metric's A/A noise from the runs stored for this machine."""
    from pytest_netbench._compare.gate import DEFAULT_COMPARE_METRICS
    from pytest_netbench._compare.noise import stored_noise

    gated = [t.metric for t in _thresholds(settings.compare_fail)]
    return stored_noise(settings.storage_dir, [*DEFAULT_COMPARE_METRICS, *gated])


def gate_header(settings: Settings) -> list[str]:
    """What the gate will do, said before the first load: its thresholds, trials and
    false-alarm rate, and each threshold below its metric's noise floor here."""
    if settings.compare_fail is None:  # (it needs --netbench-compare or --netbench-ab)
        return []
    from pytest_netbench._compare.family import unreachable_level
    from pytest_netbench._compare.noise import limits_below_noise
    from pytest_netbench._plugin.sequential_trials import gate_rule

    rule = gate_rule(settings)
    thresholds = _thresholds(settings.compare_fail)
    if rule.design is not None:
        trials, how = rule.design.budget, rule.design.describe()
    else:
        trials, how = settings.trials, f"fixed, {settings.trials} trial(s) a side"
    lines = [
        f"netbench gate: {', '.join(t.describe() for t in thresholds)}; {how}; "
        f"false alarms <= {rule.alpha:g} per test (all gated metrics together)"
    ]
    warnings = limits_below_noise(thresholds, _stored_noise(settings), trials)
    unreachable = unreachable_level(rule, len(thresholds), trials)
    if unreachable:
        warnings.append(unreachable)
    lines += [f"netbench gate: WARNING {warning}" for warning in warnings]
    return lines


@dataclass
class _ArmPair(Generic[Measured]):
    """One test's (function, parameters, label) trials, or experiments, on each arm."""

    title: str
    base: list[Measured] = field(default_factory=list)
    head: list[Measured] = field(default_factory=list)


def _pair_arms(records: Iterable[Measured]) -> list[_ArmPair[Measured]]:
    pairs: dict[tuple[str, tuple[tuple[str, str], ...], str], _ArmPair[Measured]] = {}
    for record in records:
        arm = record.params.get(ARM_PARAM)
        if arm not in ("base", "head"):
            continue
        others = tuple(sorted((k, str(v)) for k, v in record.params.items() if k != ARM_PARAM))
        key = (record.function, others, record.label)
        if key not in pairs:
            pairs[key] = _ArmPair(_pair_title(record.function, others, record.label))
        getattr(pairs[key], str(arm)).append(record)
    return [p for p in pairs.values() if p.base and p.head]


def _pair_title(function: str, params: tuple[tuple[str, str], ...], label: str) -> str:
    name = function.rsplit("::", 1)[-1]
    extra = [f"{k}={v}" for k, v in params] + ([label] if label else [])
    return f"{name}[{', '.join(extra)}]" if extra else name


def _compare_ab(
    records: Sequence[Record], experiments: Sequence[ExperimentRecord], settings: Settings
) -> Comparison:
    """Each test's HEAD trials (or experiment) against its BASE ones from this session."""
    from pytest_netbench._compare.gate import (
        Comparison,
        check_request_names,
        compare_experiments,
        compare_results,
    )
    from pytest_netbench._compare.profile_diff import profiled, where_time_went
    from pytest_netbench._plugin.sequential_trials import gate_rule

    gate = settings.compare_fail

    limits = _thresholds(gate)
    check_request_names((t.metric for t in limits), (r.result for r in records))
    rule = gate_rule(settings)
    noise = _stored_noise(settings)
    items = []
    where = []
    for pair in _pair_arms(records):
        head = [r.result for r in pair.head]
        base = [r.result for r in pair.base]
        items += compare_results(pair.title, head, base, limits, rule=rule, noise=noise)
        base_profile, head_profile = profiled(base), profiled(head)
        if base_profile is not None and head_profile is not None:
            where.append(where_time_went(pair.title, base_profile, head_profile))
    for exp_pair in _pair_arms(experiments):
        items += compare_experiments(
            exp_pair.title, exp_pair.head, exp_pair.base, limits, rule=rule
        )
    return Comparison(
        items=tuple(items),
        baseline_name="BASE (A/B: HEAD and BASE in interleaved trials, this session)",
        thresholds=tuple(limits),
        where=tuple(where),
    )


def _describe_ab(settings: Settings) -> str:
    if settings.ab_refs is not None:
        base, head = settings.ab_refs
    else:
        base = f"each test's server, started from {settings.ab_base_dir}"
        head = f"each test's server as the test gives it (in {settings.ab_head_dir})"
    return f"A/B mode: BASE = {base}\n          HEAD = {head}\n"


# -- files -------------------------------------------------------------------------------------
def _write_files(
    config: pytest.Config,
    nb: NetbenchSession,
    matrices: Sequence[Matrix],
    comparisons: Sequence[Comparison],
) -> list[str]:
    from pytest_netbench._report.writers import WRITERS, SessionOutputs, write_outputs

    def amend_json(payload: dict[str, Any]) -> None:
        gate: dict[str, Any] = {}
        if nb.settings.sequential is not None:
            # So that `netbench compare` reads these trials with the looks that took them.
            batch, budget = nb.settings.sequential
            gate["sequential"] = [batch, budget]
        if nb.settings.alpha is not None:
            gate["alpha"] = nb.settings.alpha  # and at the false-alarm rate they were judged
        if gate:
            payload["gate"] = gate
        if comparisons:
            from pytest_netbench._report.comparison import comparison_to_dict

            payload["comparisons"] = [comparison_to_dict(c) for c in comparisons]
        config.hook.pytest_netbench_update_json(config=config, payload=payload)

    outputs = SessionOutputs(
        settings=nb.settings,
        records=nb.records,
        matrices=matrices,
        comparisons=comparisons,
        amend_json=amend_json,
        experiments=nb.experiments,
    )
    notes = write_outputs(WRITERS, outputs)
    if nb.settings.save_name:
        # After comparing: saving first would make this run its own "latest" baseline.
        saved = _save(nb.settings, outputs)
        notes.append(f"netbench: run saved as {saved}")
    return notes


def _save(settings: Settings, outputs: SessionOutputs) -> Path:
    from pytest_netbench._compare.storage import Storage

    assert settings.save_name is not None
    storage = Storage(settings.storage_dir)
    run = storage.save(
        outputs.records,
        settings.save_name,
        outputs.environment(),
        amend=outputs.amend_json,
        experiments=outputs.experiments,
    )
    return run.path


def _terminal_width(config: pytest.Config) -> int:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    width = getattr(getattr(reporter, "_tw", None), "fullwidth", 0)
    return int(width) if width else shutil.get_terminal_size().columns
