"""A load's server profile in the HTML report: its top functions (as the terminal's) and
a flame graph of its folded stacks, inline (nested blocks, no script): each frame as wide
as its share of the samples, its callers above it, the name and share in its title."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.records import Record
from pytest_netbench._model import ServerProfile
from pytest_netbench._report.profile import TOP, cost_words, describe
from pytest_netbench._report.requests import shown_loads

_MIN_SHARE = 0.005  # frames narrower than this are left out of the picture
_MAX_DEPTH = 40
_HUES = (20, 35, 45, 10, 28)  # warm colours, picked by name so a frame keeps its colour


def profiles_html(records: Sequence[Record], function: str) -> list[str]:
    """The heading and, per profiled load of ``function``, its table and flame graph."""
    loads = shown_loads(records, function, lambda r: r.profile is not None)
    if not loads:
        return []
    parts = ["<h4>Server profile</h4>"]
    for load in loads:
        profile = load.result.profile
        assert profile is not None
        caption = escape(load.caption or "")
        if profile.problem:
            parts.append(f'<p class="note">{caption} none: {escape(profile.problem)}</p>')
            continue
        words = cost_words(profile)
        parts.append(
            f'<p class="note">{caption + ": " if caption else ""}{escape(describe(profile))}'
            + (f"; {escape(words)}" if words else "")
            + "</p>"
        )
        parts.append(_table(profile))
        parts.append(flame_html(profile))
    return parts


def _table(profile: ServerProfile) -> str:
    head = (
        "<tr><th class=num>self</th><th class=num>total</th>"
        "<th class=num>self ms/req</th><th>function</th></tr>"
    )
    rows = "".join(
        f"<tr><td class=num>{f.self_share:.1%}</td><td class=num>{f.total_share:.1%}</td>"
        f"<td class=num>{f.self_cpu_ms_per_request:.4f}</td>"
        f"<td class=label><code>{escape(f.name)}</code></td></tr>"
        for f in profile.hottest(TOP)
    )
    return f'<div class="scroll"><table><thead>{head}</thead><tbody>{rows}</tbody></table></div>'


def _tree(folded: dict[str, int]) -> dict[str, tuple[int, dict[str, object]]]:
    root: dict[str, tuple[int, dict[str, object]]] = {}
    for stack, count in folded.items():
        level = root
        for frame in stack.split(";")[:_MAX_DEPTH]:
            total, children = level.get(frame, (0, {}))
            level[frame] = (total + count, children)
            level = children  # type: ignore[assignment]
    return root


def flame_html(profile: ServerProfile) -> str:
    """The flame graph (icicle: the roots on top) of ``profile``'s folded stacks."""
    total = sum(profile.folded.values())
    if not total:
        return ""
    inner = _level(_tree(dict(profile.folded)), total, total)
    return f'<div class="flame" title="flame graph: {total:,} samples">{inner}</div>'


def _level(level: dict[str, tuple[int, dict[str, object]]], parent: int, total: int) -> str:
    blocks = []
    for name, (count, children) in sorted(level.items(), key=lambda item: -item[1][0]):
        if count / total < _MIN_SHARE:
            continue
        hue = _HUES[sum(map(ord, name)) % len(_HUES)]
        below = _level(children, count, total) if children else ""  # type: ignore[arg-type]
        title = f"{name}: {count / total:.1%} of samples"
        blocks.append(
            f'<div class="fr" style="width:{count / parent * 100:.2f}%">'
            f'<div class="fn" style="background:hsl({hue},85%,62%)" title="{escape(title)}">'
            f"{escape(name)}</div>{below}</div>"
        )
    return f'<div class="fl">{"".join(blocks)}</div>'
