"""``rig runs --timeline`` and ``--stats`` for people: bars on a time axis on a colour terminal, tables elsewhere.

The bars are laid out here as cells of the terminal's width (``bar_cells``) and only coloured by
Rich; off a terminal, or with NO_COLOR, the same numbers come as a plain table (colour is what
tells the critical path and the failures apart in the bars, so without it a table says it better).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rigcli.engine.timing import RunStats, Timeline, TimelineNode
from rigcli.masking import mask_text
from rigcli.records import shown_time
from rigcli.render.console import no_color, stdout_console
from rigcli.render.lines import format_duration
from rigcli.render.plain import is_terminal
from rigcli.render.tables import print_table
from rigcli.run_ids import short_run_id
from rigcli.sanitize import sanitize
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.tables import cell_width, table_lines, write_lines
from rigcli.streams import real_stdout

if TYPE_CHECKING:
    pass

if TYPE_CHECKING:
    import rich.text as rich_text
else:
    rich_text = lazy_module("rich.text")


EIGHTHS = " ▏▎▍▌▋▊▉"  # a bar's last cell, in eighths of a cell
BAR_STYLES = {"failed": "red", "interrupted": "yellow", "in-doubt": "yellow", "running": "yellow"}
CRITICAL = "magenta"
RAN = "blue"
CACHED = "green"
MIN_BAR_CELLS = 10


def shown(value: str) -> str:
    """A name of the project as it may be shown: secrets masked, no control sequences."""
    return sanitize(mask_text(value))


def _seconds(value: float) -> str:
    return f"{value:.2f}s"


def _when(timeline: Timeline) -> str:
    return shown_time(timeline.started_at)


def heading(timeline: Timeline) -> str:
    ran = sum(1 for node in timeline.nodes if not node.cached)
    cached = len(timeline.nodes) - ran
    return (
        f"{shown(timeline.workflow)}  apply {short_run_id(timeline.run_id)}  {_when(timeline)}  "
        f"{format_duration(timeline.total_seconds)} total  ran {ran}, cached {cached}"
    )


def summary_lines(timeline: Timeline, *, arrow: str = " → ", comma: str = " · ") -> list[tuple[str, str]]:
    """(label, text) pairs: the critical path and the slowest tasks."""
    critical = arrow.join(shown(path) for path in timeline.critical_path) or "-"
    slowest = comma.join(
        f"{shown(node.path)} {format_duration(timeline.duration(node))}" for node in timeline.slowest()
    )
    return [("critical path", critical), ("slowest", slowest or "-")]


# -- a plain table -----------------------------------------------------------------------------


def timeline_table(timeline: Timeline) -> list[str]:
    columns = ["#", "node", "status", "start", "end", "duration", "critical"]
    rows = [
        [
            str(index),
            shown(node.path),
            node.status,
            _seconds(node.start),
            "" if node.end is None else _seconds(node.end),
            "" if node.cached else _seconds(timeline.duration(node)),
            "*" if node.critical else "",
        ]
        for index, node in enumerate(timeline.nodes, start=1)
    ]
    summary = [f"{label}: {text}" for label, text in summary_lines(timeline, arrow=" -> ", comma=", ")]
    return [heading(timeline), *table_lines(columns, rows), *summary]


STATS_COLUMNS = ["node", "runs", "cache hits", "median", "p95"]


def _stats_rows(stats: RunStats) -> list[list[str]]:
    return [
        [
            shown(task.path),
            str(task.runs),
            f"{task.cache_hit_rate:.0%}",
            "-" if task.median_seconds is None else format_duration(task.median_seconds),
            "-" if task.p95_seconds is None else format_duration(task.p95_seconds),
        ]
        for task in stats.tasks
    ]


def stats_table(stats: RunStats) -> list[str]:
    plural = "apply" if stats.applies == 1 else "applies"
    head = f"{shown(stats.workflow)}  the last {stats.applies} {plural}"
    rows = _stats_rows(stats)
    return [head, *(table_lines(STATS_COLUMNS, rows) if rows else ["no applies recorded"])]


# -- bars on a terminal ------------------------------------------------------------------------


def tick_step(total: float, cells: int) -> float:
    """A round step (1, 2 or 5 times a power of ten, in seconds) giving a label every ~10 cells."""
    wanted = max(total, 1e-3) / max(1, cells // 10)
    power = 10.0 ** math.floor(math.log10(wanted))  # a float: the exponent may be negative
    return next(step * power for step in (1, 2, 5, 10) if step * power >= wanted)


def _tick_label(seconds: float) -> str:
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{seconds:.10g}s" if seconds >= 1 or seconds == 0 else f"{seconds:.3g}s"


def axis(total: float, cells: int) -> str:
    """Tick labels over ``cells`` columns: one every round step, none overlapping."""
    line = [" "] * cells
    step = tick_step(total, cells)
    scale = cells / max(total, 1e-9)
    free = 0
    for index in range(int(total / step) + 2):
        seconds = index * step
        column = round(seconds * scale)
        label = _tick_label(round(seconds, 6))
        if column < free or column + len(label) > cells:
            continue
        line[column : column + len(label)] = label
        free = column + len(label) + 1
    return "".join(line)


def bar_cells(node: TimelineNode, total: float, cells: int, clock: float, *, unicode: bool = True) -> tuple[int, str]:
    """Where the node's bar starts (a column) and its characters: a mark for a cached task, else at
    least an eighth of a cell."""
    scale = cells / max(total, 1e-9)
    start = min(cells - 1, int(node.start * scale))
    if node.cached:
        return start, "│" if unicode else "|"
    eighths = max(1, round(node.duration(clock) * scale * 8))
    eighths = min(eighths, (cells - start) * 8)
    if not unicode:
        return start, "#" * max(1, round(eighths / 8))
    full, rest = divmod(eighths, 8)
    return start, "█" * full + (EIGHTHS[rest] if rest else "")


def print_timeline(timeline: Timeline, *, width: int | None = None) -> None:
    """Bars on a colour terminal; a plain table on anything else."""

    stream = real_stdout()
    if no_color() or not is_terminal(stream):
        write_lines(stream, timeline_table(timeline))
        return
    out = stdout_console()
    unicode = (out.encoding or "").lower().replace("-", "").startswith("utf")
    for line in timeline_bars(timeline, width or out.width, unicode=unicode):
        out.print(line, soft_wrap=True, overflow="ignore", crop=False)


def timeline_bars(timeline: Timeline, width: int, *, unicode: bool = True) -> list[rich_text.Text]:

    nodes = timeline.nodes
    durations = [
        "cached" if node.cached else format_duration(timeline.duration(node)) + ("…" if node.end is None else "")
        for node in nodes
    ]
    names = [shown(node.path) for node in nodes]
    name_width = min(max((cell_width(name) for name in names), default=4), max(12, width * 2 // 5))
    duration_width = max((len(text) for text in durations), default=6)
    left = 2 + name_width + 2 + duration_width + 2
    cells = max(MIN_BAR_CELLS, width - left - 1)
    total = timeline.total_seconds
    lines = [
        rich_text.Text(heading(timeline), style="bold"),
        rich_text.Text(" " * left + axis(total, cells), style="dim"),
    ]
    step = tick_step(total, cells)
    grid = {round(index * step * cells / max(total, 1e-9)) for index in range(int(total / step) + 1)}
    mark = "◆" if unicode else "*"
    for node, name, duration in zip(nodes, names, durations, strict=True):
        if cell_width(name) > name_width:
            name = "…" + name[-(name_width - 1) :]
        start, bar = bar_cells(node, total, cells, timeline.total_seconds, unicode=unicode)
        style = CRITICAL if node.critical else CACHED if node.cached else RAN
        style = BAR_STYLES.get(node.status, style)
        row = rich_text.Text(mark + " " if node.critical else "  ", style=CRITICAL)
        row.append(name + " " * (name_width - cell_width(name)) + "  ")
        row.append(duration.rjust(duration_width), style="dim" if node.cached else "")
        row.append("  ")
        row.append("".join("·" if column in grid else " " for column in range(start)), style="dim")
        row.append(bar, style=style)
        lines.append(row)
    legend = rich_text.Text("  ")
    for label, style, sample in (("ran", RAN, "█"), ("critical path", CRITICAL, "█"), ("cached", CACHED, "│")):
        legend.append(sample if unicode else "#", style=style)
        legend.append(f" {label}   ")
    legend.append("█" if unicode else "#", style="red")
    legend.append(" failed")
    lines.append(legend)
    for label, text in summary_lines(timeline, arrow=" → " if unicode else " -> ", comma=" · " if unicode else ", "):
        lines.append(rich_text.Text.assemble((f"{label:<14}", "bold"), text))
    return lines


def print_stats(stats: RunStats) -> None:
    """A table (Rich on a terminal, plain text elsewhere) of each task over the last applies."""

    head, *_ = stats_table(stats)
    print_table(STATS_COLUMNS, _stats_rows(stats), empty="no applies recorded", title=head)


__all__ = [
    "axis",
    "bar_cells",
    "heading",
    "print_stats",
    "print_timeline",
    "shown",
    "stats_table",
    "tick_step",
    "timeline_bars",
    "timeline_table",
]
