"""The hidden ``rig __complete --shell SH --index I -- WORDS...`` endpoint the completion scripts call.

Commands, options and where their values come from are read from the command table (no Typer);
project data from complete_sources. The answer is one candidate per line (``value`` for bash,
``value<TAB>description`` for zsh and fish). It never fails loudly: any problem means fewer
candidates and exit code 0.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from rigcli.cli.argv import hoist
from rigcli.cli.complete_sources import Item, OperationSpec, ProjectSource, paths, provider_ids
from rigcli.cli.spec import Command, Option, Table
from rigcli.cli.table import TABLE
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    from rigcli.cli.opargs import InputField
    from rigcli.cli.spec import Source

HELP = Option(("--help",), "help", "Show help.")


@lazy_dataclass
class Position:
    """What the words before the cursor say: command path, positionals and the option awaiting a value."""

    command: Command | None = None  # the innermost command named so far (a group while its sub is missing)
    positionals: list[str] = field(default_factory=list)
    pending_option: Option | None = None
    globals: dict[str, str] = field(default_factory=dict)
    unknown: bool = False  # the words name no command: nothing sensible to offer


def read_position(table: Table, words: Sequence[str]) -> Position:
    hoisted = hoist(list(words), table)  # global options sit anywhere, exactly as on a real run
    pos = Position(globals={key: value for key, value in hoisted.values.items() if isinstance(value, str)})
    words = hoisted.rest
    only_positionals = False
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        option = table.option(word)
        if option is not None and not option.flag:  # hoist leaves one in place only when its value is missing
            pos.pending_option = option
            continue
        current = pos.command or table.root
        if current.pass_through or only_positionals or not word.startswith("-"):
            sub = current.subcommand(word) if current.commands else None
            if sub is not None:
                pos.command = sub
            elif pos.command is not None:
                pos.positionals.append(word)
            else:
                pos.unknown = True
            continue
        if word == "--":
            only_positionals = True
            continue
        name, has_value, _ = word.partition("=")
        own = current.option(name)
        if own is not None and not own.flag and not has_value:
            if index + own.arity <= len(words):
                index += own.arity
            else:
                pos.pending_option = own
    return pos


def _options(table: Table, pos: Position) -> list[Item]:
    own = pos.command or table.root
    shown = [*own.options, HELP]
    if own is not table.root:  # root-only flags make no sense after a command
        shown += [item for item in table.options if not item.eager]
    return [
        (spelling, item.help)
        for item in shown
        if not item.hidden
        for spelling in item.spellings
        if spelling.startswith("--")
    ]


def candidates(table: Table, words: Sequence[str], current: str) -> list[Item]:
    pos = read_position(table, words)
    source = ProjectSource(
        workflow=pos.globals.get("workflow"),
        chdir=pos.globals.get("chdir"),
        config=pos.globals.get("config"),
        state=pos.globals.get("state"),
    )
    if pos.pending_option is not None:
        return _option_values(table, pos.pending_option, current, source)
    if pos.unknown:
        return []
    command = pos.command
    if command is not None and command.pass_through and command.arguments[0].complete == "operation":
        return _op(table, pos, current, source)
    if current.startswith("-"):
        name, eq, value = current.partition("=")
        option = (command or table.root).option(name) or table.option(name)
        if eq and option is not None:
            return [(f"{name}={item}", about) for item, about in _option_values(table, option, value, source)]
        return _options(table, pos)
    found = _positionals(table, pos, current, source)
    if found is None:  # nothing positional goes here: offer the options instead
        return [] if current else _options(table, pos)
    return found


def _option_values(table: Table, option: Option, current: str, source: ProjectSource) -> list[Item]:
    if option.choices:
        return [(choice, "choice") for choice in option.choices]
    if option.complete is None:
        return []
    return _source(table, option.complete, current, source, [])


def _source(table: Table, name: Source, current: str, source: ProjectSource, before: list[str]) -> list[Item]:
    """The values a named source offers (``before``: the positionals already given, for ``commands``)."""
    if name == "workspaces":
        return source.workspaces()
    if name in ("tasks", "valid-tasks"):
        return source.task_paths(valid_only=name == "valid-tasks")
    if name == "workflows":
        return source.workflows()
    if name == "providers":
        return provider_ids()
    if name in ("dirs", "files"):
        return paths(current, dirs_only=name == "dirs")
    if name == "commands":
        group = table.root
        for word in before:
            group = group.subcommand(word) or group
        return [(item.name, item.summary) for item in group.commands if not item.hidden]
    return []


def _positionals(table: Table, pos: Position, current: str, source: ProjectSource) -> list[Item] | None:
    """Candidates for the next positional; None when this command takes no known positional here."""
    command = pos.command or table.root
    if command.commands:
        return [(item.name, item.summary) for item in command.commands if not item.hidden]
    count = len(pos.positionals)
    arguments = command.arguments
    argument = arguments[count] if count < len(arguments) else None
    if argument is None and arguments and arguments[-1].variadic:
        argument = arguments[-1]
    if argument is None:
        return None
    if argument.suggest:
        return list(argument.suggest)
    if argument.complete is None:
        return None
    return _source(table, argument.complete, current, source, pos.positionals)


def _op(table: Table, pos: Position, current: str, source: ProjectSource) -> list[Item]:
    words = pos.positionals
    if not words:
        return _options(table, pos) if current.startswith("-") else _op_targets(current, source)
    spec, after = _resolve_op(words, source)
    if spec is None:
        workspaces = {name for name, _ in source.workspaces()}
        if len(words) == 1 and words[0] in workspaces and not current.startswith("-"):
            return [(item.id, item.description) for item in _workspace_ops(source, words[0])]
        return []
    rest, pending = _scan(spec, after)
    if pending is not None:
        return _field_values(pending, source)
    positional = sorted((f for f in spec.fields if f.position is not None), key=lambda f: f.position or 0)
    if not current.startswith("-") and len(rest) < len(positional):
        return _field_values(positional[len(rest)], source)
    used = {word.partition("=")[0] for word in after}
    flags = [(f.flag, f.description or f.kind) for f in spec.fields if f.position is None and f.flag not in used]
    return [*flags, ("--help", "show this operation's inputs")]


def _scan(spec: OperationSpec, words: Sequence[str]) -> tuple[list[str], InputField | None]:
    """Positionals among ``words``, and the option still waiting for its value (if the last word is one)."""
    by_flag = {item.flag: item for item in spec.fields}
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, eq, _ = word.partition("=")
        item = by_flag.get(name) if word.startswith("--") else None
        if item is None:
            if not word.startswith("-"):
                rest.append(word)
            continue
        if item.kind != "boolean" and not eq:
            if index >= len(words):
                return rest, item
            index += 1
    return rest, None


def _op_targets(current: str, source: ProjectSource) -> list[Item]:
    if "/" in current:
        workspace = current.partition("/")[0]
        return [(f"{workspace}/{item.id}", item.description) for item in _workspace_ops(source, workspace)]
    workflow_ops = [(item.id, item.description or "operation") for item in source.operations(workspace=False)]
    return [*source.workspaces(), *workflow_ops]


def _workspace_ops(source: ProjectSource, workspace: str) -> list[OperationSpec]:
    owners = {record.workflow for record in source.workspace_records() if record.name == workspace}
    return [item for item in source.operations(workspace=True) if item.workflow in owners]


def _resolve_op(words: Sequence[str], source: ProjectSource) -> tuple[OperationSpec | None, list[str]]:
    """The operation the leading words name (None while they name none yet) and the words after it."""
    first = words[0]
    if "/" in first:
        workspace, _, op_id = first.partition("/")
        return _find(_workspace_ops(source, workspace), op_id), list(words[1:])
    if first in {name for name, _ in source.workspaces()}:
        if len(words) < 2:
            return None, []
        return _find(_workspace_ops(source, first), words[1]), list(words[2:])
    return _find(source.operations(workspace=False), first), list(words[1:])


def _find(specs: list[OperationSpec], op_id: str) -> OperationSpec | None:
    return next((item for item in specs if item.id == op_id), None)


def _field_values(item: InputField, source: ProjectSource) -> list[Item]:
    if item.choices:
        return [(choice, "choice") for choice in item.choices]
    if item.kind == "boolean":
        return [("true", ""), ("false", "")]
    if item.kind == "workspace":
        return source.workspaces()
    return []


def complete(shell: str, index: int, words: list[str]) -> list[Item]:
    if shell == "bash":  # bash splits --opt=value into three words; join them back as --opt value
        while "=" in words[1 : index + 1]:
            at = words.index("=", 1)
            words = [*words[:at], *words[at + 1 :]] if at < index else [*words[:at], ""]
            index -= 1 if at < index else 0
    current = words[index] if index < len(words) else ""
    found = candidates(TABLE, words[1:index], current)
    return [item for item in dict.fromkeys(found) if item[0].startswith(current)]


def main(argv: list[str]) -> int:
    try:
        shell = argv[argv.index("--shell") + 1]
        index = int(argv[argv.index("--index") + 1])
        words = argv[argv.index("--") + 1 :]
        items = complete(shell, index, words)
        lines = [value if shell == "bash" else f"{value}\t{about}" for value, about in items]
        sys.stdout.write("".join(line.replace("\n", " ") + "\n" for line in lines))
    except (Exception, SystemExit):
        pass  # a completion that cannot answer stays silent
    return 0


__all__ = ["candidates", "complete", "main", "read_position"]
