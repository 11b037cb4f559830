"""Runs thrown away and run again because the generator, not the server, spoiled them.

A load invalid only for generator-side causes (its schedule lag, its CPU, its file
descriptors) is run again; the session still says how many runs that cost each test and
why, counted per cause, so a machine that keeps spoiling runs does not go unnoticed.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netbench._compare.gate import record_key
from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._report.markdown import render_table_markdown


@dataclass(frozen=True, slots=True)
class DiscardNote:
    """One test's discarded runs."""

    key: str
    discarded: int
    runs: int  # every run of the test's loads, the discarded ones included
    causes: Mapping[str, int]
    example: str  # the reason one discarded run gave, in its own words

    @property
    def causes_text(self) -> str:
        return ", ".join(f"{cause} {n}" for cause, n in self.causes.items())


def discard_notes(
    records: Iterable[Record], experiments: Iterable[ExperimentRecord] = ()
) -> list[DiscardNote]:
    """A note per test that discarded any run, in the order the tests first appear."""
    runs: dict[str, int] = {}
    reasons: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for record in records:
        key = record_key(record)
        runs[key] = runs.get(key, 0) + record.attempts
        reasons.setdefault(key, []).extend(
            (r.invalid_causes, "; ".join(r.invalid_reasons)) for r in record.discarded
        )
    for experiment in experiments:
        key = record_key(experiment)
        for kept_and_discarded in _attempts_in(experiment.data):
            runs[key] = runs.get(key, 0) + 1 + len(kept_and_discarded)
            reasons.setdefault(key, []).extend(
                (tuple(d.get("invalid_causes") or ()), "; ".join(d.get("invalid_reasons") or ()))
                for d in kept_and_discarded
            )
    notes = []
    for key, found in reasons.items():
        if found:
            counts = _count_causes(causes for causes, _ in found)
            notes.append(DiscardNote(key, len(found), runs[key], counts, found[0][1]))
    return notes


def _count_causes(causes: Iterable[tuple[str, ...]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in causes:
        for cause in dict.fromkeys(run):
            counts[cause] = counts.get(cause, 0) + 1
    return dict(sorted(counts.items()))


def _attempts_in(data: Any) -> Iterator[list[Mapping[str, Any]]]:
    """Every "discarded" list of an experiment's dict (a sweep step's, a capacity step's)."""
    if isinstance(data, Mapping):
        discarded = data.get("discarded")
        if isinstance(discarded, list):
            yield [d for d in discarded if isinstance(d, Mapping)]
        for name, value in data.items():
            if name != "discarded":
                yield from _attempts_in(value)
    elif isinstance(data, list):
        for value in data:
            yield from _attempts_in(value)


def _summary(notes: list[DiscardNote]) -> str:
    total = sum(n.discarded for n in notes)
    counts: dict[str, int] = {}
    for note in notes:
        for cause, n in note.causes.items():
            counts[cause] = counts.get(cause, 0) + n
    causes = ", ".join(f"{cause} {n}" for cause, n in sorted(counts.items()))
    return (
        f"{total} run(s) discarded and run again, invalid for generator-side causes"
        f" ({causes}) in {len(notes)} test(s)"
    )


def render_discards_text(notes: list[DiscardNote], *, width: int = 80) -> str:
    """Empty when nothing was discarded."""
    if not notes:
        return ""
    lines = textwrap.wrap("netbench: " + _summary(notes) + ":", width, subsequent_indent="  ")
    for note in notes:
        lines.append(f"  {note.key}")  # whole, however long: it is what people search for
        text = (
            f"{note.discarded} of {note.runs} runs discarded ({note.causes_text});"
            f" e.g. {note.example}"
        )
        lines += textwrap.wrap(text, width, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(lines) + "\n"


def render_discards_markdown(notes: list[DiscardNote]) -> str:
    if not notes:
        return ""
    rows = [(f"`{n.key}`", str(n.discarded), str(n.runs), n.causes_text, n.example) for n in notes]
    table = render_table_markdown(("test", "discarded", "runs", "causes", "e.g."), rows)
    return f"### Discarded runs\n\n{_summary(notes)}.\n\n{table}"
