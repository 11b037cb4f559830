"""A load's server profile in the HTML report: its top functions (as the terminal's) and
a flame graph of its folded stacks, inline (nested blocks, no script): each frame as wide
as its share of the samples, its callers above it, the name and share in its title.
Under a comparison with profiles on both sides, a differential flame graph: head's
frames, each as wide as its CPU per request and coloured by its change from base."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from pytest_netbench._compare.profile_diff import WhereTimeWent, change_noise_ms
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
            f"</table></div>{named}{diff_flame_html(where)}"
        )
    if parts:
        parts.append(f'<p class="note">{escape(WHERE_LEGEND[0].upper() + WHERE_LEGEND[1:])}.</p>')
    return "".join(parts)


DIFF_LEGEND = (
    "head's stacks, the callers on top, each frame as wide as its CPU per request in head"
    " (the whole width: the costlier side's; the dashed line: base's whole CPU per request);"
    " red: a frame that itself spent more CPU per request than in base, blue: less, the"
    " deeper the colour the larger the change; pale red or blue: a caller of such frames"
    " (with them, it spent more or less); grey: a change within the sampling noise. A"
    " function head no longer runs is only in the table; each frame's numbers are in its"
    " tooltip"
)
_ADDED_HUE, _SAVED_HUE = 0, 212
_NEUTRAL = "hsl(40,8%,86%)"
_CALLER_DEPTH = 0.12  # the pale tint of a caller whose own CPU did not change


@dataclass(slots=True)
class _Node:
    base: int = 0
    head: int = 0
    children: dict[str, _Node] = field(default_factory=dict)

    def own(self) -> tuple[int, int]:
        """Its samples with it on top of the stack (its own CPU), base and head."""
        return (
            self.base - sum(c.base for c in self.children.values()),
            self.head - sum(c.head for c in self.children.values()),
        )


def _diff_tree(base: Mapping[str, int], head: Mapping[str, int]) -> dict[str, _Node]:
    root: dict[str, _Node] = {}
    for folded, side in ((base, "base"), (head, "head")):
        for stack, count in folded.items():
            level = root
            for frame in stack.split(";")[:_MAX_DEPTH]:
                node = level.setdefault(frame, _Node())
                setattr(node, side, getattr(node, side) + count)
                level = node.children
    return root


@dataclass(frozen=True, slots=True)
class _Sides:
    n_base: int
    n_head: int
    cpu_base: float
    cpu_head: float

    @property
    def scale(self) -> float:
        """The whole width, ms per request: the costlier side's."""
        return max(self.cpu_base, self.cpu_head)

    def change(self, base: int, head: int) -> tuple[float, bool]:
        """The change in ms per request that ``base`` and ``head`` samples stand for, and
        whether it is beyond the sampling noise."""
        change = head / self.n_head * self.cpu_head - base / self.n_base * self.cpu_base
        noise = change_noise_ms(base, self.n_base, self.cpu_base, head, self.n_head, self.cpu_head)
        return change, abs(change) > noise

    def head_ms(self, node: _Node) -> float:
        return node.head / self.n_head * self.cpu_head


def diff_flame_html(where: WhereTimeWent) -> str:
    """The differential flame graph of ``where``'s two profiles ("" without both)."""
    n_base, n_head = sum(where.base_folded.values()), sum(where.head_folded.values())
    cpu_base, cpu_head = where.base_cpu_ms, where.head_cpu_ms
    if not (n_base and n_head and cpu_base > 0 and cpu_head > 0):
        return ""
    tree = _diff_tree(where.base_folded, where.head_folded)
    sides = _Sides(n_base, n_head, cpu_base, cpu_head)
    inner = _diff_level(tree, sides.scale, sides, _deepest_own_change(tree, sides) or 1.0)
    key = "".join(
        f'<span class="ph-key" style="background:{colour}"></span>{word}'
        for colour, word in (
            (_diff_colour(1.0, _ADDED_HUE), "more CPU per request in head"),
            (_diff_colour(1.0, _SAVED_HUE), "less"),
            (_diff_colour(_CALLER_DEPTH, _ADDED_HUE), "a caller of those"),
            (_NEUTRAL, "within noise"),
        )
    )
    base_at = cpu_base / sides.scale * 100
    marker = (
        f'<div style="position:absolute;top:0;bottom:0;left:{base_at:.2f}%;'
        'border-left:2px dashed rgba(0,0,0,.5);pointer-events:none"></div>'
        if base_at < 99.5
        else ""
    )
    return (
        f'<p class="note">Differential flame graph: base {cpu_base:.3f} &rarr; head'
        f" {cpu_head:.3f} ms of server CPU per request. {key}</p>"
        f'<div class="flame diff-flame" style="position:relative"'
        f' title="differential flame graph">{inner}{marker}</div>'
        f'<p class="note">{escape(DIFF_LEGEND)}.</p>'
    )


def _diff_colour(depth: float, hue: int) -> str:
    """From pale (a change just beyond noise) to deep (the largest change)."""
    depth = min(max(depth, 0.0), 1.0)
    return f"hsl({hue},{45 + 35 * depth:.0f}%,{90 - 32 * depth:.0f}%)"


def _deepest_own_change(level: dict[str, _Node], sides: _Sides) -> float:
    deepest = 0.0
    for node in level.values():
        if sides.head_ms(node) / sides.scale < _MIN_SHARE:
            continue
        change, beyond = sides.change(*node.own())
        if beyond:
            deepest = max(deepest, abs(change))
        deepest = max(deepest, _deepest_own_change(node.children, sides))
    return deepest


def _diff_level(level: dict[str, _Node], parent_ms: float, sides: _Sides, deepest: float) -> str:
    blocks = []
    for name, node in sorted(level.items(), key=lambda item: (-item[1].head, item[0])):
        head_ms = sides.head_ms(node)
        if head_ms / sides.scale < _MIN_SHARE:
            continue
        own, own_beyond = sides.change(*node.own())
        whole, whole_beyond = sides.change(node.base, node.head)
        if own_beyond:
            colour = _diff_colour(abs(own) / deepest, _ADDED_HUE if own > 0 else _SAVED_HUE)
        elif whole_beyond:
            colour = _diff_colour(_CALLER_DEPTH, _ADDED_HUE if whole > 0 else _SAVED_HUE)
        else:
            colour = _NEUTRAL
        base_ms = head_ms - whole
        title = (
            f"{name}: {base_ms:.4f} \u2192 {head_ms:.4f} ms of CPU per request ({whole:+.4f},"
            f" {'beyond' if whole_beyond else 'within'} noise; its own {own:+.4f},"
            f" {'beyond' if own_beyond else 'within'} noise); {node.base:,} and"
            f" {node.head:,} samples"
        )
        below = _diff_level(node.children, head_ms, sides, deepest) if node.children else ""
        width = head_ms / parent_ms * 100 if parent_ms > 0 and not math.isnan(parent_ms) else 0
        blocks.append(
            f'<div class="fr" style="width:{width:.2f}%">'
            f'<div class="fn" style="background:{colour}" title="{escape(title)}">'
            f"{escape(name)}</div>{below}</div>"
        )
    return f'<div class="fl">{"".join(blocks)}</div>'
