"""Human views of command results: the plan table, generic tables, key/value lists, JSON values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from rigcli.engine.results import WorkflowPlan
from rigcli.masking import mask_text
from rigcli.records import short_run_id
from rigcli.render.plain import can_render, plain_stderr, plain_stdout, table_lines, write_lines
from rigcli.render.sanitize import sanitize
from rigcli.statuses import CacheEntryStatus, CheckStatus, PlanStatus, WorkspaceStatus

if TYPE_CHECKING:  # Rich is imported only when a terminal (or a test) gets Rich output
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

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
    "ready": "green",
    "failed": "red",
    "creating": "yellow",
    "removing": "yellow",
}
_STYLE_OF: dict[str, str] = {str(status): style for status, style in STATUS_STYLES.items()}  # looked up by cell text


def _stdout(console: Console | None) -> TextIO | None:
    """Where to write plain text, or None when this output goes through a Rich console."""
    return plain_stdout() if console is None else None


def _table(columns: Sequence[str]) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _text(value: object) -> str:
    """A cell as it may be shown: secrets masked, no control sequences (names and values are the project's)."""
    return "" if value is None else sanitize(mask_text(str(value)))


def _cell(value: object, column: str) -> Text:
    from rich.text import Text

    text = _text(value)
    style = _STYLE_OF.get(text, "") if column == "status" else ""
    return Text(text, style=style)


def print_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    empty: str,
    title: str | None = None,
    console: Console | None = None,
) -> None:
    plain = _stdout(console)
    cells = [[_text(value) for value in row] for row in rows]
    if plain is not None and can_render(cells):
        head = [title] if title else []
        write_lines(plain, [*head, *(table_lines(columns, cells) if cells else [empty])])
        return
    from rich.text import Text

    from rigcli.render.console import stdout_console

    out = console or stdout_console()
    if title:
        out.print(Text(title, style="bold"))
    if not rows:
        out.print(Text(empty, style="dim"))
        return
    table = _table(columns)
    for row in rows:
        table.add_row(*(_cell(value, column) for value, column in zip(row, columns, strict=False)))
    out.print(table)


def print_plan(plan: WorkflowPlan, *, console: Console | None = None) -> None:
    """``<workflow>  <cached>/<total> cached``, provider checks, then ``# | status | node | reason``."""
    workflow = _text(plan.workflow)
    heading = f"{workflow}  {plan.cached_node_count}/{plan.node_count} cached"
    checks = [
        [
            _text(check.get("provider_id") or check.get("provider_name") or ""),
            _text(check.get("label") or check.get("id")),
            _text(check.get("status")),
            _text(check.get("message") if check.get("status") == "required" else check.get("value")),
        ]
        for check in plan.provider_checks
    ]
    rows = []
    for node in plan.nodes:
        if node.status == "cached":
            why = f"run {short_run_id(node.run_id)}" if node.run_id else "cached"
        else:
            why = node.reason.message or node.reason.code
        rows.append([str(node.index), node.status, _text(node.path), _text(why)])
    plain = _stdout(console)
    if plain is not None and can_render(checks) and can_render(rows):
        lines = [heading]
        if checks:
            lines += table_lines(CHECK_COLUMNS, checks)
        lines += table_lines(PLAN_COLUMNS, rows) if rows else ["no nodes"]
        write_lines(plain, lines)
        return
    from rich.text import Text

    from rigcli.render.console import stdout_console

    out = console or stdout_console()
    out.print(Text.assemble((workflow, "bold"), heading[len(workflow) :]))
    if checks:
        print_table(CHECK_COLUMNS, checks, empty="", console=out)
    print_table(PLAN_COLUMNS, rows, empty="no nodes", console=out)


def format_age(timestamp: object) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago`` for an ISO-8601 time; the input when unparsable."""
    if not isinstance(timestamp, str) or not timestamp:
        return ""
    from rigcli.records import VERY_OLD, age_seconds, parse_timestamp

    if parse_timestamp(timestamp) == VERY_OLD:
        return timestamp
    seconds = age_seconds(timestamp)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def print_kv(pairs: Sequence[tuple[str, object]], *, console: Console | None = None) -> None:
    width = max((len(key) for key, _ in pairs), default=0)
    plain = _stdout(console)
    if plain is not None:
        write_lines(plain, [f"{key.ljust(width)}  {_text(value)}" for key, value in pairs])
        return
    from rich.text import Text

    from rigcli.render.console import stdout_console

    out = console or stdout_console()
    for key, value in pairs:
        out.print(Text.assemble((key.ljust(width), "bold"), "  ", _text(value)), soft_wrap=True)


def print_value(value: object, *, console: Console | None = None) -> None:
    """An operation's result: strings as they are, anything else as indented JSON."""
    if value is None:
        return
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    plain = _stdout(console)
    if plain is not None:
        write_lines(plain, [text])
        return
    from rigcli.render.console import stdout_console

    out = console or stdout_console()
    if not isinstance(value, str) and out.is_terminal and out.color_system:
        from rich.json import JSON

        out.print(JSON(text))
    else:
        # A terminal: the result is the project's text, and must not drive the terminal.
        out.print(sanitize(text, colour=bool(out.color_system)), soft_wrap=True, markup=False)


def print_message(text: str, *, style: str = "", err: bool = True) -> None:
    """A short status line; on stderr unless it is the command's result."""
    text = sanitize(text)  # it may quote a name or a message from the project
    plain = plain_stderr() if err else plain_stdout()
    if plain is not None:
        write_lines(plain, [text])
        return
    from rich.text import Text

    from rigcli.render.console import stderr_console, stdout_console

    out = stderr_console() if err else stdout_console()
    out.print(Text(text, style=style), soft_wrap=True)


def print_next_steps(steps: Sequence[tuple[str, str]], *, err: bool = True) -> None:
    """The "Next" block: a command and what it does (stderr after fork, where stdout holds the name)."""
    width = max((len(command) for command, _ in steps), default=0)
    plain = plain_stderr() if err else plain_stdout()
    if plain is not None:
        write_lines(plain, ["Next", *(f"  {command.ljust(width)}  {about}" for command, about in steps)])
        return
    from rich.text import Text

    from rigcli.render.console import stderr_console, stdout_console

    out = stderr_console() if err else stdout_console()
    out.print(Text("Next", style="bold"))
    for command, description in steps:
        out.print(Text.assemble("  ", (command.ljust(width), "cyan"), "  ", (description, "dim")), soft_wrap=True)


__all__ = ["format_age", "print_kv", "print_message", "print_next_steps", "print_plan", "print_table", "print_value"]
