"""The command reference (docs/commands.md), rendered from the command table as Markdown.

``python -m rigcli.cli.reference docs/commands.md`` writes it; without a path it prints it.
Every command, group and sub-command of the table, with its arguments, options, aliases, help and
examples, plus the global options: a row added to the table appears here with nothing else to do.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from rigcli.cli.spec import Argument, Command, Option, Table
from rigcli.cli.table import TABLE

REGENERATE = "python -m rigcli.cli.reference docs/commands.md"


def render_commands_markdown(table: Table) -> str:
    """docs/commands.md: the global options, an index of every command, then one section per command."""
    lines = [
        "# Command reference",
        "",
        f"<!-- Generated from rigcli/cli/table/ by `{REGENERATE}`: edit the table, not this page. -->",
        "",
        f"`{table.name}`: {table.help} The same text is in `{table.name} COMMAND --help`.",
        "",
        "## Global options",
        "",
        "Accepted anywhere on the line, before or after the command's own words (up to `--`).",
        "",
        *_options_table(table.options),
        "",
        "## Commands",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [_row(f"[{_code(' '.join(path))}](#{_slug(path)})", item.summary) for path, item in _walk(table)]
    for path, command in _walk(table):
        lines += ["", *_section(path, command)]
    return "\n".join(lines) + "\n"


def _walk(table: Table) -> Iterator[tuple[tuple[str, ...], Command]]:
    """Every command of the table with its path of names, groups before their sub-commands."""

    def visit(prefix: tuple[str, ...], commands: Sequence[Command]) -> Iterator[tuple[tuple[str, ...], Command]]:
        for command in commands:
            if command.hidden:
                continue
            path = (*prefix, command.name)
            yield path, command
            yield from visit(path, command.commands)

    return visit((table.name,), table.commands)


def _section(path: tuple[str, ...], command: Command) -> list[str]:
    heading = "#" * min(len(path), 4)
    lines = [f"{heading} {_code(' '.join(path))}", "", command.help, ""]
    if command.commands:
        subcommands = ", ".join(
            f"[{_code(' '.join((*path, sub.name)))}](#{_slug((*path, sub.name))})"
            for sub in command.commands
            if not sub.hidden
        )
        return [*lines, f"Sub-commands: {subcommands}."]
    lines += ["```", _usage(path, command), "```"]
    if command.aliases:
        names = ", ".join(_code(" ".join((*path[:-1], alias))) for alias in command.aliases)
        lines += ["", f"Also spelled {names}: the same command."]
    if command.pass_through:
        lines += ["", "Every word after the command is the command's own to read, `--help` included."]
    if command.arguments:
        lines += ["", "| argument | what it is |", "|---|---|"]
        lines += [_row(_code(_argument_shown(item)), _argument_text(item)) for item in command.arguments]
    if command.options:
        lines += ["", *_options_table(command.options)]
    if command.examples:
        width = max(len(line) for line, _ in command.examples)
        lines += ["", "Examples:", "", "```"]
        lines += [f"{line.ljust(width)}   # {about}" for line, about in command.examples]
        lines += ["```"]
    return lines


def _usage(path: tuple[str, ...], command: Command) -> str:
    words = [*path, *(_option_usage(item) for item in command.options)]
    words += [_argument_usage(item) for item in command.arguments]
    return " ".join(words)


def _option_usage(option: Option) -> str:
    value = option.metavar or "|".join(option.choices)
    spelled = option.spellings[0] + (f" {value}" if value else "")
    if option.required:
        return spelled
    return f"[{spelled}]" + ("..." if option.repeat else "")


def _argument_shown(argument: Argument) -> str:
    many = argument.variadic and "..." not in argument.metavar and " " not in argument.metavar
    return argument.metavar + ("..." if many else "")


def _argument_usage(argument: Argument) -> str:
    shown = _argument_shown(argument)
    return shown if argument.required else f"[{shown}]"


def _argument_text(argument: Argument) -> str:
    parts = [argument.help or "The command's own words."]
    parts.append("Required." if argument.required else "Optional.")
    if argument.suggest:
        values = "; ".join(f"`{value}`: {about}" for value, about in argument.suggest)
        parts.append(f"Values: {values}.")
    return " ".join(parts)


def _options_table(options: Sequence[Option]) -> list[str]:
    rows = ["| option | default | what it does |", "|---|---|---|"]
    for option in options:
        if option.hidden:
            continue
        default = "" if option.default is None else _code(str(option.default))
        notes = [option.help]
        if option.kind == "int":
            notes.append("A whole number.")
        if option.required:
            notes.append("Required.")
        if option.repeat:
            notes.append("May be given more than once.")
        rows.append(_row(_code(option.shown), default, " ".join(notes)))
    return rows


def _slug(path: Sequence[str]) -> str:
    """The anchor GitHub gives a heading that reads ``rig cache ls`` (code spans count as their text)."""
    return "-".join(path).lower()


def _code(text: str) -> str:
    return f"`{text}`"


def _row(*cells: str) -> str:
    """One table row; each cell on one line, its pipes escaped (also inside code spans, as GFM wants)."""
    return "| " + " | ".join(" ".join(cell.split()).replace("|", "\\|") for cell in cells) + " |"


def main(argv: Sequence[str]) -> int:
    text = render_commands_markdown(TABLE)
    if not argv:
        sys.stdout.buffer.write(text.encode())
        return 0
    Path(argv[0]).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


__all__ = ["REGENERATE", "main", "render_commands_markdown"]
