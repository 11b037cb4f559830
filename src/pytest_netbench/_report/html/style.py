"""The report's stylesheet, inlined in the page: no fonts, scripts or styles from outside,
so the file reads the same offline, attached to a CI run or mailed."""

CSS = """
:root { --ink: #1d232b; --muted: #5b6672; --line: #d8dee5; --band: #f3f5f8;
  --bad: #fde2e1; --bad-ink: #a11a12; --good: #e1f5e6; --good-ink: #1b6b32;
  --warn: #fff3cd; --accent: #24527a; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; line-height: 1.45;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header.top { background: var(--accent); color: #fff; padding: 18px 32px 14px; }
header.top h1 { margin: 0 0 4px; font-size: 24px; font-weight: 600; }
header.top p { margin: 2px 0; color: #dce7f1; font-size: 13px; }
main { max-width: 1240px; margin: 0 auto; padding: 8px 32px 48px; }
h2 { font-size: 20px; margin: 34px 0 10px; padding-bottom: 4px;
  border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 26px 0 8px; }
h3 code, h2 code { font-size: 15px; }
h4 { font-size: 14px; margin: 18px 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: 13px; }
a { color: var(--accent); }
.summary { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0 4px; padding: 0;
  list-style: none; }
.summary li { background: var(--band); border: 1px solid var(--line); border-radius: 6px;
  padding: 6px 12px; font-size: 14px; }
.summary li b { font-size: 18px; margin-right: 4px; }
.summary li.bad { background: var(--bad); border-color: #f3b4b0; color: var(--bad-ink); }
.summary li.good { background: var(--good); border-color: #a9dcb6; color: var(--good-ink); }
.summary li.warn { background: var(--warn); border-color: #ecd58c; }
nav.toc { background: var(--band); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 18px; margin: 18px 0; font-size: 14px; }
nav.toc h2 { font-size: 14px; margin: 0 0 4px; border: 0; padding: 0; }
nav.toc ol { margin: 0; padding-left: 20px; }
nav.toc ol ol { padding-left: 18px; }
.scroll { overflow-x: auto; margin: 6px 0; }
table { border-collapse: collapse; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 4px 10px; vertical-align: top; }
thead th { background: var(--band); font-weight: 600; text-align: left; white-space: nowrap; }
th.group { text-align: center; }
table.matrix .gs { border-left: 2px solid #aab4bf; }
tbody tr:nth-child(even) { background: #fafbfc; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
thead th.num { text-align: right; }
td.label { white-space: nowrap; }
.extra { color: var(--muted); font-size: 12px; }
tr.invalid-row, tr.invalid-row:nth-child(even) { background: var(--bad); }
td.invalid { background: #f8c9c6; color: var(--bad-ink); }
td.reason { color: var(--bad-ink); min-width: 280px; }
.mark { color: var(--bad-ink); font-weight: 700; }
tr.bad, tr.bad:nth-child(even) { background: var(--bad); }
tr.good, tr.good:nth-child(even) { background: var(--good); }
tr.warn, tr.warn:nth-child(even) { background: var(--warn); }
table.comparison tr.first td { border-top: 2px solid #b9c3cd; }
table.comparison tbody tr:first-child td { border-top: 1px solid var(--line); }
td.verdict.bad { color: var(--bad-ink); font-weight: 700; }
td.verdict.good { color: var(--good-ink); font-weight: 600; }
table caption { caption-side: top; text-align: left; font-size: 14px; font-weight: 600;
  padding: 10px 0 4px; }
table.shares tr.total td, table.requests tr.total td { border-top: 2px solid #b9c3cd;
  font-weight: 600; }
table.checks tr.failed td { background: var(--bad); color: var(--bad-ink); }
ul.notes { margin: 4px 0 10px; padding-left: 18px; color: var(--muted); font-size: 13px; }
li.invalid-note { color: var(--bad-ink); }
table.facts th { text-align: left; background: var(--band); white-space: nowrap;
  font-weight: 600; }
table.facts td { word-break: break-word; }
.gate { font-weight: 600; margin: 8px 0; }
.gate.bad { color: var(--bad-ink); }
.gate.good { color: var(--good-ink); }
.gate.warn { background: var(--warn); padding: 2px 6px; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr));
  gap: 14px; margin: 8px 0; align-items: start; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px;
  background: #fff; }
figure.wide { grid-column: 1 / -1; }
figure img { display: block; width: auto; height: auto; max-width: 100%; max-height: 440px;
  margin: 0 auto; }
figure.wide img { max-height: none; }
figcaption { font-size: 12.5px; color: var(--muted); margin-top: 4px; }
figcaption code { font-size: 11px; color: #8a949e; word-break: break-all; }
details { margin: 8px 0; }
details > summary { cursor: pointer; color: var(--accent); font-size: 14px; }
p.note { color: var(--muted); font-size: 13.5px; }
.phase-bar { display: flex; height: 14px; }
.ph-key { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 6px; }
.phase-bar span { display: block; height: 100%; }
.ph-connect { background: #9aa5b1; } .ph-tls { background: #c7a4d8; }
.ph-wait { background: #24527a; } .ph-receive { background: #7fb3e0; }
td.diff { width: 160px; } .diff-bar { display: block; height: 10px; margin-top: 4px; }
.flame { border: 1px solid var(--line); padding: 2px; margin: 6px 0 12px; overflow: hidden; }
.flame .fl { display: flex; width: 100%; }
.flame .fr { min-width: 0; }
.flame .fn { font: 11px/16px ui-monospace, "DejaVu Sans Mono", monospace; height: 16px;
  padding: 0 3px; margin: 0 1px 1px 0; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; color: #2b1a0e; }
p.missing { background: var(--warn); border: 1px solid #efd98c; padding: 8px 12px;
  border-radius: 6px; }
section.test + section.test { border-top: 1px solid var(--line); margin-top: 22px; }
footer { color: var(--muted); font-size: 12px; margin-top: 40px; }
@media print { .scroll { overflow: visible; } details { display: block; } }
"""
