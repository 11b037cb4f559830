"""The session's pictures for the HTML report, inline as ``data:`` URIs.

The plots package draws them (the same files ``--netbench-plot`` writes, into a scratch
directory here), so the report shows exactly those pictures; they are then grouped by the
test function their file name starts with. Without matplotlib the report says how to get
them rather than failing.
"""

from __future__ import annotations

import base64
import struct
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from pytest_netbench._compare.records import ExperimentRecord, Record
from pytest_netbench._errors import NetbenchError
from pytest_netbench._report.matrix import Matrix
from pytest_netbench._report.plots.canvas import MISSING, matplotlib_installed
from pytest_netbench._report.plots.naming import function_stem

# Pictures of one test that say most at a glance; per-load ones (a spectrum and a timeline
# for each parametrisation and trial) are folded away when there are more than a few.
_SUMMARY_KINDS = ("latency", "sweep", "capacity", "cold_start")
_PER_LOAD_SHOWN = 2
_WIDE_ASPECT = 2.0


@dataclass(frozen=True, slots=True)
class Picture:
    name: str  # the file name --netbench-plot gives it
    caption: str  # that name without the test's stem and ".png"
    uri: str
    width: int = 0  # pixels, from the PNG header
    height: int = 0

    @property
    def wide(self) -> bool:
        """Side-by-side panels (a sweep's three graphs): shown across the whole page."""
        return self.height > 0 and self.width / self.height > _WIDE_ASPECT


@dataclass
class Pictures:
    """Pictures by test function; ``unavailable`` says why there are none."""

    by_function: dict[str, list[Picture]] = field(default_factory=dict)
    session: list[Picture] = field(default_factory=list)  # across functions (all-sweep)
    unavailable: str = ""

    def of(self, function: str) -> list[Picture]:
        return self.by_function.get(function, [])


def draw_pictures(
    records: Sequence[Record], experiments: Sequence[ExperimentRecord], matrices: Sequence[Matrix]
) -> Pictures:
    """Every picture ``--netbench-plot`` would draw for this session, embedded."""
    if not (records or experiments):
        return Pictures()
    if not matplotlib_installed():
        return Pictures(unavailable=MISSING)
    from pytest_netbench._report.plots.session import plot_session

    with tempfile.TemporaryDirectory(prefix="netbench-html-") as scratch:
        try:
            paths = plot_session(
                scratch, records=records, experiments=experiments, matrices=matrices
            )
        except (NetbenchError, ValueError, OSError) as exc:
            # The tables are worth having without the pictures: say why they are missing.
            return Pictures(unavailable=f"drawing them failed: {exc}")
        pictures = [(p.name, p.read_bytes()) for p in paths]
    functions = list(
        dict.fromkeys([r.function for r in records] + [e.function for e in experiments])
    )
    # Longest stem first, so test_a_b's pictures never land under test_a.
    stems = sorted(((function_stem(f), f) for f in functions), key=lambda s: -len(s[0]))
    out = Pictures()
    for name, png in pictures:
        owner = next((f for stem, f in stems if name.startswith(stem + "-")), None)
        if owner is None:
            out.session.append(_picture(name, name.removesuffix(".png"), png))
            continue
        caption = name.removeprefix(function_stem(owner) + "-").removesuffix(".png")
        out.by_function.setdefault(owner, []).append(_picture(name, caption, png))
    return out


def split_pictures(pictures: Sequence[Picture]) -> tuple[list[Picture], list[Picture]]:
    """(shown, folded): a test's summary pictures, and its per-load ones when many."""
    summary = [p for p in pictures if _is_summary(p.caption)]
    per_load = [p for p in pictures if not _is_summary(p.caption)]
    if len(per_load) <= _PER_LOAD_SHOWN:
        return [*summary, *per_load], []
    return summary, per_load


def _is_summary(caption: str) -> bool:
    return (
        caption in _SUMMARY_KINDS
        or caption.startswith("matrix-")
        or caption.endswith(("-sweep", "-capacity", "-cold_start"))
    )


def figures_html(pictures: Sequence[Picture]) -> str:
    """Pictures side by side (a wide one across the page), each with its caption and file."""
    return (
        '<div class="figures">'
        + "".join(
            f"<figure{' class=wide' if p.wide else ''}>"
            f'<img src="{p.uri}" alt="{escape(p.name)}" width="{p.width}" height="{p.height}"'
            ' loading="lazy">'
            f"<figcaption>{escape(describe_picture(p.caption))}"
            f" <code>{escape(p.name)}</code></figcaption></figure>"
            for p in pictures
        )
        + "</div>"
    )


_KIND_WORDS: tuple[tuple[str, str], ...] = (
    ("latency", "latency spectrum"),
    ("timeline", "timeline, per second"),
    ("sweep", "rate sweep"),
    ("capacity", "capacity search: the steps"),
    ("cold_start", "cold start"),
)


def describe_picture(caption: str) -> str:
    """``served=300-trial2-latency`` -> ``served=300, trial2: latency spectrum``."""
    head, _, metric = caption.partition("matrix-")
    if metric and (not head or head.endswith("-")):
        words, rest = f"matrix bars: {metric}", head.rstrip("-")
    else:
        rest, _, kind = caption.rpartition("-")
        if not kind.isalpha() and "_" not in kind and rest:  # a repeat: "...-latency-2"
            rest, _, kind = rest.rpartition("-")
        words = dict(_KIND_WORDS).get(kind, kind)
    return f"{rest.replace('-', ', ')}: {words}" if rest else words


def _picture(name: str, caption: str, png: bytes) -> Picture:
    # A PNG's IHDR chunk holds width and height right after the 16-byte signature + header.
    width, height = struct.unpack(">II", png[16:24]) if len(png) >= 24 else (0, 0)
    uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return Picture(name, caption, uri, width, height)
