"""A timeline as a standalone SVG document: the terminal's picture, for a browser or a report.

Hand-written SVG 1.1, one ``<rect class="bar …">`` per task (``id`` and ``data-path`` name it,
its ``<title>`` is the tooltip), its styles inline in a ``<style>`` element: no script, no
external font or image, so it opens anywhere offline and attaches to anything.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from rigcli.engine.timing import Timeline, TimelineNode
from rigcli.render.lines import format_duration
from rigcli.render.timeline import heading, shown, summary_lines, tick_step

WIDTH = 1000
ROW = 24
BAR = 14
TOP = 64  # heading and axis labels
RIGHT = 24
CHAR = 7.2  # average advance of the 12 px monospace font, for sizing the name column

STYLE = """
  text { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; fill: #1f2328; }
  .heading { font-weight: bold; font-size: 14px; }
  .axis { fill: #656d76; }
  .grid { stroke: #d0d7de; stroke-width: 1; }
  .bar { fill: #4c78a8; }
  .bar.critical { fill: #b5179e; }
  .bar.cached { fill: #2e7d32; }
  .bar.failed { fill: #cf222e; }
  .bar.interrupted, .bar.running, .bar.in-doubt { fill: #bf8700; }
  .duration { fill: #656d76; }
  .label { font-weight: bold; }
"""


def _id(path: str, taken: set[str]) -> str:
    base = "node-" + re.sub(r"[^A-Za-z0-9_.-]", "_", path)
    name, suffix = base, 2
    while name in taken:
        name, suffix = f"{base}-{suffix}", suffix + 1
    taken.add(name)
    return name


def _classes(node: TimelineNode) -> str:
    return " ".join(["bar", "cached" if node.cached else "ran", node.status, *(["critical"] if node.critical else [])])


def timeline_svg(timeline: Timeline) -> str:
    """The whole document, ``<?xml …?>`` first."""
    names = [shown(node.path) for node in timeline.nodes]
    name_width = min(360.0, max((len(name) for name in names), default=4) * CHAR + 16)
    left = 12 + name_width + 72  # names, then durations, then the bars
    cells = WIDTH - left - RIGHT
    total = max(timeline.total_seconds, 1e-9)
    scale = cells / total
    rows = len(timeline.nodes)
    footer = TOP + rows * ROW + 16
    height = footer + 2 * 18 + 8
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}">',
        f"<title>{escape(heading(timeline))}</title>",
        f"<style>{STYLE}</style>",
        f'<rect class="background" x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text class="heading" x="12" y="22">{escape(heading(timeline))}</text>',
    ]
    step = tick_step(timeline.total_seconds, int(cells / CHAR))
    index = 0
    while index * step <= timeline.total_seconds + 1e-9:
        x = left + index * step * scale
        label = format_duration(index * step) if index else "0s"
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{TOP - 12}" x2="{x:.1f}" y2="{TOP + rows * ROW}"/>')
        out.append(f'<text class="axis" x="{x + 3:.1f}" y="{TOP - 16}">{escape(label)}</text>')
        index += 1
    taken: set[str] = set()
    for row, (node, name) in enumerate(zip(timeline.nodes, names, strict=True)):
        y = TOP + row * ROW
        duration = "cached" if node.cached else format_duration(timeline.duration(node))
        out.append(f'<text x="12" y="{y + 16}">{escape(name)}</text>')
        out.append(f'<text class="duration" x="{12 + name_width}" y="{y + 16}">{escape(duration)}</text>')
        x = left + node.start * scale
        width = 2.0 if node.cached else max(1.0, timeline.duration(node) * scale)
        tooltip = f"{shown(node.path)}: {duration} ({node.status}), from {node.start:.2f}s"
        out.append(
            f'<rect class="{_classes(node)}" id="{_id(node.path, taken)}" data-path={quoteattr(shown(node.path))} '
            f'x="{x - (1 if node.cached else 0):.2f}" y="{y + (ROW - BAR) / 2}" width="{width:.2f}" height="{BAR}" '
            f'rx="2"><title>{escape(tooltip)}</title></rect>'
        )
    for number, (label, text) in enumerate(summary_lines(timeline)):
        y = footer + number * 18 + 12
        out.append(f'<text x="12" y="{y}"><tspan class="label">{escape(label)}</tspan>  {escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


__all__ = ["timeline_svg"]
