"""A load's server profile in the HTML report: its top functions (as the terminal's) and
a flame graph of its folded stacks, inline (nested blocks, no script): each frame as wide
as its share of the samples, its callers above it, the name and share in its title."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_netbench._compare.profile_diff import WhereTimeWent
from pytest_netbench._compare.records import Record
from pytest_netbench._model import ServerProfile
from pytest_netbench._report.profile import TOP, cost_words, describe
from pytest_netbench._report.requests import shown_loads
from pytest_netbench._report.where_time_went import WHERE_LEGEND

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


def where_html(wheres: Sequence[WhereTimeWent]) -> str:
    """Under a comparison: each profiled test's functions ranked by their change in CPU
    per request, each with a bar of its change (red: added, blue: saved), beyond-noise
    ones in bold."""
    parts = []
    for where in wheres:
        widest = max((abs(c.change_ms) for c in where.changes), default=0.0) or 1.0
        rows = []
        for change in where.changes:
            width = abs(change.change_ms) / widest * 100
            colour = "#c0392b" if change.change_ms > 0 else "#2e6da4"
            bar = f'<span class="diff-bar" style="width:{width:.1f}%;background:{colour}"></span>'
            share = change.share_of_change
            of = f"{share:.0%}" if change.beyond_noise and share == share else "-"
            name = escape(change.name)
            name = f"<b>{name}</b> *" if change.beyond_noise else name
            rows.append(
                f"<tr><td class=num>{change.base_ms:.4f}</td>"
                f"<td class=num>{change.head_ms:.4f}</td>"
                f"<td class=num>{change.change_ms:+.4f}</td><td class=num>{of}</td>"
                f'<td class="diff">{bar}</td><td class=label><code>{name}</code></td></tr>'
            )
        head = (
            "<tr><th class=num>base ms/req</th><th class=num>head ms/req</th>"
            "<th class=num>change</th><th class=num>of change</th><th></th><th>function</th></tr>"
        )
        named = "" if where.named else "<p class=note>No function changed beyond the noise.</p>"
        parts.append(
            f"<h4>Where the time went: <code>{escape(where.key)}</code></h4>"
            f'<p class="note">server CPU per request {where.base_cpu_ms:.3f} ms &rarr;'
            f" {where.head_cpu_ms:.3f} ms; {where.base_samples:,} and {where.head_samples:,}"
            " samples</p>"
            f'<div class="scroll"><table><thead>{head}</thead><tbody>{"".join(rows)}</tbody>'
            f"</table></div>{named}"
        )
    if parts:
        parts.append(f'<p class="note">{escape(WHERE_LEGEND[0].upper() + WHERE_LEGEND[1:])}.</p>')
    return "".join(parts)
