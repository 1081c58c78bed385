"""Human views of command results: the plan table, generic tables, key/value lists, JSON values."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rigcli.masking import mask_text
from rigcli.render.plain import plain_stderr, plain_stdout
from rigcli.run_ids import short_run_id
from rigcli.sanitize import sanitize
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.tables import Line, Table, View, plain_lines, write_lines
from rigcli.speed.timestamps import stored_epoch

# Not typing.TYPE_CHECKING: rig ls answered from the cache writes with this module and imports no typing (nor
# the records, nor the engine's results); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:  # Rich is imported only when a terminal (or a test) gets Rich output
    from rich.console import Console

    from rigcli.jsonutil import JsonObject
    from rigcli.statuses import CacheEntryStatus, CheckStatus, PlanStatus, WorkspaceStatus

if TYPE_CHECKING:
    import json

    import rich
    import rich.json as rich_json
    import rich.table as rich_table
    import rich.text as rich_text
else:
    rich = lazy_module("rich")
    rich_json = lazy_module("rich.json")
    rich_table = lazy_module("rich.table")
    rich_text = lazy_module("rich.text")
    json = lazy_module("json")


PLAN_COLUMNS = ["#", "status", "node", "reason"]
CHECK_COLUMNS = ["provider", "check", "status", "current"]
# How each status people see in a "status" column is coloured (others are plain): keyed by the
# statuses' own types, so a status that is renamed or misspelt here is a mypy error.
STATUS_STYLES: dict[PlanStatus | CacheEntryStatus | CheckStatus | WorkspaceStatus, str] = {
    "cached": "green",
    "pending": "yellow",
    "invalidated": "yellow",
    "in-doubt": "red",
    "ok": "green",
    "required": "yellow",
    "error": "red",
    "ready": "green",
    "failed": "red",
    "creating": "yellow",
    "removing": "yellow",
    "reap-failed": "red",
}
_STYLE_OF: dict[str, str] = {str(status): style for status, style in STATUS_STYLES.items()}  # looked up by cell text
_STYLED = {"status": _STYLE_OF}


def write(view: View, *, console: Console | None = None, err: bool = False) -> None:
    """The one writer of a view: plain text off a terminal (Rich is not even imported), Rich on one
    (or on ``console``). ``err`` picks stderr for status lines; results go to stdout."""
    if console is None:
        plain = plain_stderr() if err else plain_stdout()
        lines = None if plain is None else plain_lines(view)
        if plain is not None and lines is not None:
            write_lines(plain, lines)
            return
    from rigcli.render.console import stderr_console, stdout_console

    _write_rich(console or (stderr_console() if err else stdout_console()), view)


def _write_rich(out: Console, view: View) -> None:

    for block in view:
        if isinstance(block, Line):
            out.print(rich_text.Text.assemble(*((span.text, span.style) for span in block.spans)), soft_wrap=True)
        elif block.rows:
            table = rich_table.Table(box=rich.box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
            for column in block.columns:
                table.add_column(column, overflow="fold")
            styles = [block.styles.get(column, {}) for column in block.columns]
            for row in block.rows:
                table.add_row(
                    *(rich_text.Text(cell, style=style.get(cell, "")) for cell, style in zip(row, styles, strict=False))
                )
            out.print(table)
        elif block.empty is not None:
            out.print(rich_text.Text(block.empty, style="dim"), soft_wrap=True)


def _text(value: object) -> str:
    """A cell as it may be shown: secrets masked, no control sequences (names and values are the project's)."""
    return "" if value is None else sanitize(mask_text(str(value)))


def print_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    empty: str,
    title: str | None = None,
    console: Console | None = None,
) -> None:
    cells = [[_text(value) for value in row] for row in rows]
    head = [Line.of((title, "bold"))] if title else []
    write([*head, Table(columns, cells, _STYLED, empty)], console=console)


def print_plan(plan: JsonObject, *, console: Console | None = None) -> None:
    """``<workflow>  <cached>/<total> cached``, provider checks, then ``# | status | node | reason``.

    From the plan's JSON (``WorkflowPlan.to_json``), which is what ``rig plan`` also prints without
    the config (``cli/commands/plan.py``): one document, one way to show it."""
    checks = [
        [
            _text(check.get("provider_id") or check.get("provider_name") or ""),
            _text(check.get("label") or check.get("id")),
            _text(check.get("status")),
            _text(check.get("value") if check.get("status") == "ok" else check.get("message") or check.get("value")),
        ]
        for check in _objects(plan.get("provider_checks"))
    ]
    rows = []
    for node in _objects(plan.get("nodes")):
        run_id, reason = node.get("run_id"), node.get("reason")
        why: object = None
        if node.get("status") == "cached":
            why = f"run {short_run_id(run_id)}" if isinstance(run_id, str) and run_id else "cached"
        elif isinstance(reason, dict):
            why = reason.get("message") or reason.get("code")
        rows.append([str(node.get("index")), _text(node.get("status")), _text(node.get("path")), _text(why)])
    heading = Line.of(
        (_text(plan.get("workflow")), "bold"), f"  {plan.get('cached_node_count')}/{plan.get('node_count')} cached"
    )
    view: View = [heading, Table(CHECK_COLUMNS, checks, _STYLED), Table(PLAN_COLUMNS, rows, _STYLED, "no nodes")]
    write(view, console=console)


def _objects(value: object) -> list[dict[str, object]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def format_age(timestamp: object) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago`` for an ISO-8601 time; the input when unparsable."""
    if not isinstance(timestamp, str) or not timestamp:
        return ""
    seconds = _age_seconds(timestamp)
    if seconds is None:
        return timestamp
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def _age_seconds(timestamp: str) -> float | None:
    """``records.age_seconds``; None for a time ``records.parse_timestamp`` cannot read. The spelling
    rig stores is read without the records (``speed/timestamps.py``), any other through the records."""
    stored = stored_epoch(timestamp)
    if stored is not None:
        return time.time() - stored
    from rigcli.records import VERY_OLD, age_seconds, parse_timestamp

    return None if parse_timestamp(timestamp) == VERY_OLD else age_seconds(timestamp)


def format_until(timestamp: object) -> str:
    """``in 7h 59m``, ``in 3m``, ``due`` for a future ISO-8601 time (an expiry); ``-`` for none."""
    if not isinstance(timestamp, str) or not timestamp:
        return "-"
    age = _age_seconds(timestamp)
    if age is None:
        return timestamp
    seconds = -age
    if seconds <= 0:
        return "due"
    if seconds >= 86400:
        return f"in {int(seconds // 86400)}d {int(seconds % 86400 // 3600)}h"
    if seconds >= 3600:
        return f"in {int(seconds // 3600)}h {int(seconds % 3600 // 60):02d}m"
    return f"in {max(1, int(seconds // 60))}m" if seconds >= 60 else f"in {int(seconds)}s"


def print_kv(pairs: Sequence[tuple[str, object]], *, console: Console | None = None) -> None:
    width = max((len(key) for key, _ in pairs), default=0)
    write([Line.of((key.ljust(width), "bold"), "  ", _text(value)) for key, value in pairs], console=console)


def print_value(value: object, *, console: Console | None = None) -> None:
    """An operation's result: strings as they are, anything else as indented JSON."""
    if value is None:
        return

    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if console is None and plain_stdout() is not None:
        write([Line.of(text)])
        return
    from rigcli.render.console import stdout_console

    out = console or stdout_console()
    if not isinstance(value, str) and out.is_terminal and out.color_system:
        out.print(rich_json.JSON(text))  # highlighted: the one output a view does not describe
    else:  # a terminal: the result is the project's text, and must not drive the terminal
        write([Line.of(sanitize(text, colour=bool(out.color_system)))], console=out)


def print_message(text: str, *, style: str = "", err: bool = True) -> None:
    """A short status line; on stderr unless it is the command's result."""
    text = sanitize(text)  # it may quote a name or a message from the project
    write([Line.of((text, style))], err=err)


def print_next_steps(steps: Sequence[tuple[str, str]], *, err: bool = True) -> None:
    """The "Next" block: a command and what it does (stderr after fork, where stdout holds the name)."""
    width = max((len(command) for command, _ in steps), default=0)
    lines = [Line.of("  ", (command.ljust(width), "cyan"), "  ", (about, "dim")) for command, about in steps]
    write([Line.of(("Next", "bold")), *lines], err=err)


__all__ = [
    "format_age",
    "print_kv",
    "print_message",
    "print_next_steps",
    "print_plan",
    "print_table",
    "print_value",
    "write",
]
