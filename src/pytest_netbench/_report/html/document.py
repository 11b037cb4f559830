"""The whole report as one HTML page: a header with the session's counts, a table of
contents, the comparison verdicts, the invalid results, a section per test function (its
matrix, experiment tables, every load, a mix's per-request tables and its pictures),
discarded runs and the environment.

Everything is in the file (styles, pictures as ``data:`` URIs, no scripts), so it opens
the same without a network. Built with the standard library's :func:`html.escape`.
"""

from __future__ import annotations

import datetime
import os
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from pytest_netbench._compare.gate import Comparison
from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._host.environment import Environment, collect_environment
from pytest_netbench._report.comparison import LEGEND, gate_result_line
from pytest_netbench._report.discards import discard_notes
from pytest_netbench._report.endings import ending_notes
from pytest_netbench._report.experiment_tables import build_experiment_tables
from pytest_netbench._report.html.checks import checks_html
from pytest_netbench._report.html.invalid import InvalidFinding, invalid_findings
from pytest_netbench._report.html.phases import phases_html
from pytest_netbench._report.html.pictures import (
    Pictures,
    draw_pictures,
    figures_html,
    split_pictures,
)
from pytest_netbench._report.html.profile import profiles_html, where_html
from pytest_netbench._report.html.requests import requests_html
from pytest_netbench._report.html.sessions import sessions_html
from pytest_netbench._report.html.shares import LEGEND as SHARES_LEGEND
from pytest_netbench._report.html.shares import has_shares, shares_html
from pytest_netbench._report.html.streams import streams_html
from pytest_netbench._report.html.style import CSS
from pytest_netbench._report.html.tables import (
    comparison_html,
    experiment_html,
    facts_html,
    loads_html,
    matrix_html,
    table,
)
from pytest_netbench._report.matrix import Matrix, build_matrices, effective_params

DEFAULT_TITLE = "pytest-netbench results"
_LOADS_OPEN = 12  # a test with more loads than this shows its loads table folded
_INVALID_ROWS_SHOWN = 12  # more invalid results than this are listed folded, under their causes


def render_html_report(
    *,
    records: Sequence[Record] = (),
    experiments: Sequence[ExperimentRecord] = (),
    matrices: Sequence[Matrix] | None = None,
    comparisons: Sequence[Comparison] = (),
    environment: Environment | Mapping[str, Any] | None = None,
    title: str = DEFAULT_TITLE,
    created: float | None = None,
    plots: bool = True,
    unit: str = "test function",
) -> str:
    """The report as a string. ``matrices``: as the terminal shows them (None: built from
    ``records`` with the default metrics); ``environment``: collected now when None;
    ``plots=False`` leaves the pictures out (they take most of the time and size);
    ``unit``: what the records' functions are, counted in the summary (``command`` for
    results measured outside pytest)."""
    if matrices is None:
        matrices = build_matrices(records)
    env = _environment_dict(environment)
    findings = invalid_findings(records, experiments)
    pictures = draw_pictures(records, experiments, matrices) if plots else Pictures()
    functions = list(
        dict.fromkeys([r.function for r in records] + [e.function for e in experiments])
    )
    anchors = _Anchors()
    test_ids = {f: anchors.claim("test-" + f.rsplit("::", 1)[-1]) for f in functions}

    sections: list[tuple[str, str, str]] = []  # (anchor, heading, body)
    if comparisons:
        body = "".join(_comparison_section(c) for c in comparisons)
        sections.append((anchors.claim("comparison"), "Comparison with the baseline", body))
    if findings:
        body = _invalid_section(findings, test_ids)
        sections.append((anchors.claim("invalid"), f"Invalid results ({len(findings)})", body))
    tests_body = "".join(
        _test_section(f, test_ids[f], records, experiments, matrices, findings, pictures)
        for f in functions
    )
    if pictures.session:
        tests_body += "<h3>Across tests</h3>" + figures_html(pictures.session)
    if pictures.unavailable:
        tests_body = f'<p class="missing">No pictures: {escape(pictures.unavailable)}.</p>' + (
            tests_body
        )
    if functions:
        sections.append((anchors.claim("tests"), "Tests", tests_body))
    discards = discard_notes(records, experiments)
    if discards:
        sections.append((anchors.claim("discarded"), "Discarded runs", _discards_section(discards)))
    sections.append((anchors.claim("environment"), "Environment", facts_html(_env_facts(env))))

    when = created if created is not None else time.time()
    stamp = datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    toc = _toc(sections, [(test_ids[f], f) for f in functions])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f'<header class="top"><h1>{escape(title)}</h1>',
        f"<p>{escape(stamp)} · {escape(_env_line(env))}</p></header>",
        "<main>",
        _summary(records, experiments, functions, findings, comparisons, unit),
        toc,
        *(f'<section id="{a}"><h2>{escape(h)}</h2>{b}</section>' for a, h, b in sections),
        "<footer>Written by pytest-netbench. Every figure is also in the session JSON "
        "(<code>--netbench-json</code>).</footer>",
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html_report(
    path: str | os.PathLike[str],
    *,
    records: Sequence[Record] = (),
    experiments: Sequence[ExperimentRecord] = (),
    matrices: Sequence[Matrix] | None = None,
    comparisons: Sequence[Comparison] = (),
    environment: Environment | Mapping[str, Any] | None = None,
    title: str = DEFAULT_TITLE,
    plots: bool = True,
    unit: str = "test function",
) -> Path:
    """Write :func:`render_html_report`'s page to ``path`` (parents created); the path."""
    text = render_html_report(
        unit=unit,
        records=records,
        experiments=experiments,
        matrices=matrices,
        comparisons=comparisons,
        environment=environment,
        title=title,
        plots=plots,
    )
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


# -- parts of the page -------------------------------------------------------------------------
class _Anchors:
    """Unique, readable ``id`` values."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, text: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower() or "section"
        anchor, n = base, 1
        while anchor in self._taken:
            n += 1
            anchor = f"{base}-{n}"
        self._taken.add(anchor)
        return anchor


def _summary(
    records: Sequence[Record],
    experiments: Sequence[ExperimentRecord],
    functions: Sequence[str],
    findings: Sequence[InvalidFinding],
    comparisons: Sequence[Comparison],
    unit: str,
) -> str:
    items = [f"<li><b>{len(functions)}</b>{_plural(len(functions), unit)}</li>"]
    if records or not experiments:
        items.append(f"<li><b>{len(records)}</b>{_plural(len(records), 'load')}</li>")
    if experiments:
        items.append(f"<li><b>{len(experiments)}</b>{_plural(len(experiments), 'experiment')}</li>")
    if findings:
        items.append(
            f'<li class="bad"><b>{len(findings)}</b>{_plural(len(findings), "invalid result")}</li>'
        )
    else:
        items.append('<li class="good"><b>0</b>invalid results</li>')
    for comparison in comparisons:
        if not comparison.thresholds:
            continue  # compared, not gated: no gate ran, so no badge says it passed
        failed = comparison.failed
        word = "FAILED" if failed else "cannot tell" if comparison.cannot_tell else "passed"
        klass = "bad" if failed else "warn" if comparison.cannot_tell else "good"
        items.append(f'<li class="{klass}"><b>gate</b>{word}</li>')
    return '<ul class="summary">' + "".join(items) + "</ul>"


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else noun + "s"


def _toc(sections: Sequence[tuple[str, str, str]], tests: Sequence[tuple[str, str]]) -> str:
    entries = []
    for anchor, heading, _body in sections:
        inner = ""
        if anchor == "tests" and tests:
            inner = "<ol>" + "".join(
                f'<li><a href="#{a}"><code>{escape(f)}</code></a></li>' for a, f in tests
            )
            inner += "</ol>"
        entries.append(f'<li><a href="#{anchor}">{escape(heading)}</a>{inner}</li>')
    return '<nav class="toc"><h2>Contents</h2><ol>' + "".join(entries) + "</ol></nav>"


def _comparison_section(comparison: Comparison) -> str:
    name = comparison.baseline_name or "the stored baseline"
    gate = ", ".join(t.describe() for t in comparison.thresholds) or "none (report only)"
    result = (
        ""
        if not comparison.thresholds
        else " bad"
        if comparison.failed
        else " warn"
        if comparison.cannot_tell
        else " good"
    )
    parts = [
        f"<h3>Against {escape(name)}</h3>",
        f'<p class="note">Gate: {escape(gate)}</p>',
        comparison_html(comparison),
        f'<p class="gate{result}">{escape(gate_result_line(comparison))}</p>',
    ]
    notes = list(dict.fromkeys(i.note for i in comparison.items if i.note))
    for title, keys in (
        ("Only in the baseline (not run now)", comparison.only_in_baseline),
        ("New (no baseline)", comparison.only_in_current),
    ):
        if keys:
            notes.append(f"{title}: {', '.join(keys)}")
    notes.append(LEGEND)  # the columns and marks, in the terminal's words
    parts.append('<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    parts.append(where_html(comparison.where))
    return "".join(parts)


def _invalid_section(findings: Sequence[InvalidFinding], test_ids: Mapping[str, str]) -> str:
    head = "<tr><th>test</th><th>which</th><th>why the figures cannot be trusted</th></tr>"
    body = [
        "<tr class=invalid-row>"
        f'<td class="label"><a href="#{test_ids.get(f.function, "")}">'
        f"<code>{escape(f.function.rsplit('::', 1)[-1])}</code></a></td>"
        f'<td class="label">{escape(f.label) or "-"}</td>'
        f'<td class="reason">{"<br>".join(escape(r) for r in f.reasons)}</td></tr>'
        for f in findings
    ]
    intro = (
        '<p class="note">A result is invalid when its figures measure the generator or the '
        "machine rather than the server (the generator saturated, a rate not achieved, file "
        "descriptors or ports ran out, the server died). Its cells are red below.</p>"
    )
    causes = Counter(f.causes[0] if f.causes else "no cause recorded" for f in findings)
    by_cause = ", ".join(
        f"<b>{count}</b> {escape(cause.replace('_', ' '))}" for cause, count in causes.most_common()
    )
    intro += f'<p class="causes">By cause: {by_cause}.</p>'
    if len(findings) <= _INVALID_ROWS_SHOWN:
        return intro + table(head, body)
    # A long list (a busy machine saturating the generator run after run) is folded, so
    # the tests below stay within reach; <details> needs no script.
    return (
        f"{intro}<details><summary>Each of the {len(findings)} results and its reasons"
        f"</summary>{table(head, body)}</details>"
    )


def _test_section(
    function: str,
    anchor: str,
    records: Sequence[Record],
    experiments: Sequence[ExperimentRecord],
    matrices: Sequence[Matrix],
    findings: Sequence[InvalidFinding],
    pictures: Pictures,
) -> str:
    own_findings = [f for f in findings if f.function == function]
    parts = [f'<section class="test" id="{anchor}"><h3><code>{escape(function)}</code></h3>']
    for matrix in (m for m in matrices if m.function == function):
        parts += ["<h4>Matrix</h4>", matrix_html(matrix, own_findings)]
    for table_model in build_experiment_tables(e for e in experiments if e.function == function):
        parts += [f"<h4>{escape(table_model.title.split('  ', 1)[-1].strip('()'))}</h4>"]
        parts.append(experiment_html(table_model))
    loads = [r for r in records if r.function == function]
    if loads:
        folded = len(loads) > _LOADS_OPEN
        summary = f"Every load ({len(loads)})"
        parts.append(f"<details{'' if folded else ' open'}><summary>{summary}</summary>")
        parts += [loads_html(loads), "</details>"]
    ended = ending_notes(records, function)  # loads that their feeders' rows ended
    if ended:
        parts.append('<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in ended))
        parts.append("</ul>")
    # A mix's spectra go beside its per-request tables, not among the other pictures.
    mixes, beside = requests_html(records, function, pictures.of(function), folded_past=_LOADS_OPEN)
    parts += mixes
    parts += checks_html(records, function)
    parts += phases_html(records, function)
    parts += profiles_html(records, function)
    parts += sessions_html(records, function)
    parts += streams_html(records, function)
    parts += _per_host(loads)
    shown, more = split_pictures([p for p in pictures.of(function) if p not in beside])
    if shown:
        parts += ["<h4>Pictures</h4>", figures_html(shown)]
    if more:
        parts.append(f"<details><summary>Pictures of each load ({len(more)})</summary>")
        parts += [figures_html(more), "</details>"]
    parts.append("</section>")
    return "".join(parts)


def _per_host(loads: Sequence[Record]) -> list[str]:
    """Each load whose shares ran on several hosts, a table each (folded when many)."""
    spread = [r for r in loads if has_shares(r.result)]
    if not spread:
        return []
    legend = f'<p class="note">{escape(SHARES_LEGEND)}</p>'
    tables = [
        shares_html(r.result, caption=_load_caption(r) if len(loads) > 1 else "") for r in spread
    ]
    if len(spread) > _LOADS_OPEN:
        summary = f"<summary>Per host, each load ({len(spread)})</summary>"
        return [f"<details>{summary}{legend}", *tables, "</details>"]
    return ["<h4>Per host</h4>", legend, *tables]


def _load_caption(record: Record) -> str:
    """``server=a, connections=50, trial 2``: which load a table is of."""
    parts = [f"{name}={value}" for name, value in effective_params(record).items()]
    if record.trial:
        parts.append(f"trial {record.trial + 1}")
    return ", ".join(parts) or record.nodeid


def _discards_section(notes: Sequence[Any]) -> str:
    head = "<tr><th>test</th><th class=num>discarded</th><th class=num>runs</th>"
    head += "<th>causes</th><th>for example</th></tr>"
    body = [
        f"<tr><td class=label><code>{escape(n.key)}</code></td><td class=num>{n.discarded}</td>"
        f"<td class=num>{n.runs}</td><td>{escape(n.causes_text)}</td>"
        f"<td>{escape(n.example)}</td></tr>"
        for n in notes
    ]
    intro = (
        '<p class="note">Runs thrown away and run again because only the generator spoiled '
        "them; never compared.</p>"
    )
    return intro + table(head, body)


# -- the environment ---------------------------------------------------------------------------
def _environment_dict(environment: Environment | Mapping[str, Any] | None) -> dict[str, Any]:
    if environment is None:
        environment = collect_environment()
    if isinstance(environment, Environment):
        return environment.to_dict()
    return dict(environment)


def _env_line(env: Mapping[str, Any]) -> str:
    parts = [
        str(env.get("cpu_model", "")),
        f"{env.get('cores_logical', '?')} cores" if env.get("cores_logical") else "",
        " ".join(str(env.get(k, "")) for k in ("python_implementation", "python_version")),
        " ".join(str(env.get(k, "")) for k in ("system", "release")),
    ]
    return " · ".join(p.strip() for p in parts if p.strip())


_LABELS: tuple[tuple[str, str], ...] = (
    ("cpu_model", "CPU"),
    ("cores_logical", "cores (logical)"),
    ("cores_physical", "cores (physical)"),
    ("cpu_freq_mhz", "CPU frequency, MHz"),
    ("affinity", "CPU affinity"),
    ("memory_gb", "memory, GiB"),
    ("system", "system"),
    ("release", "kernel release"),
    ("machine", "architecture"),
    ("python_implementation", "Python"),
    ("python_version", "Python version"),
    ("python_compiler", "Python compiler"),
    ("hostname", "host"),
    ("machine_key", "machine key (stored baselines)"),
)


def _env_facts(env: Mapping[str, Any]) -> list[tuple[str, str]]:
    facts = [(label, _text(env[key])) for key, label in _LABELS if env.get(key) is not None]
    git = env.get("git")
    if isinstance(git, Mapping):
        state = " (uncommitted changes)" if git.get("dirty") else ""
        facts.append(
            (
                "git",
                f"{git.get('project', '')} {git.get('branch', '')} "
                f"{str(git.get('commit', ''))[:12]}{state}, {git.get('time', '')}",
            )
        )
    packages = env.get("packages")
    if isinstance(packages, Mapping):
        listed = ", ".join(f"{k} {v}" for k, v in packages.items() if v)
        facts.append(("packages", listed))
    known = {k for k, _ in _LABELS} | {"git", "packages"}
    facts += [(k, _text(v)) for k, v in env.items() if k not in known and v is not None]
    return facts


def _text(value: object) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)
