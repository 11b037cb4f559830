"""Why a load ended before what it asked for, when not by an error: its feeders' rows ran
out (``on_end="stop"``, ``result.generator.feeders_ran_out``). One wording, read by the
text report (a line under its header), the Markdown (under a test's matrix) and the HTML
report (under a test's loads, :mod:`.html.document`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_netbench._model import LoadResult

# A session's records are read by the files' notes only: a command's text report, which
# reads ``ending_text``, imports neither them nor the host description (issue 35).
if TYPE_CHECKING:
    from pytest_netbench._compare.records import Record


def ending_text(result: LoadResult) -> str:
    """``ended when a feeder's rows ran out (on_end="stop"), before the 30 s asked for``;
    empty for a load that ended at its duration or request count, or was interrupted."""
    if not result.generator.feeders_ran_out:
        return ""
    text = 'ended when a feeder\'s rows ran out (on_end="stop")'
    spec = result.spec
    if spec is not None and spec.duration_s is not None:
        text += f", before the {spec.duration_s:g} s asked for"
    elif spec is not None and spec.requests is not None:
        text += f", before the {spec.requests:,} requests asked for"
    return text


def ending_notes(records: Sequence[Record], function: str) -> list[str]:
    """Each load of ``function`` that its feeders ended, with its parameters (and trial)
    when the test has any: ``rows=3: ended when ...``."""
    from pytest_netbench._report.matrix import effective_params

    notes = []
    for record in records:
        text = ending_text(record.result) if record.function == function else ""
        if not text:
            continue
        words = [f"{name}={value}" for name, value in effective_params(record).items()]
        if record.trial:
            words.append(f"trial {record.trial + 1}")
        caption = ", ".join(words)
        notes.append(f"{caption}: {text}" if caption else text[:1].upper() + text[1:])
    return notes


def endings_markdown(records: Sequence[Record], function: str) -> str:
    """The notes as a Markdown list; empty when no load of ``function`` ended so."""
    notes = ending_notes(records, function)
    return "".join(f"- {note}\n" for note in notes)
