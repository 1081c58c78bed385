"""The hidden ``rig __complete --shell SH --index I -- WORDS...`` endpoint the completion scripts call.

Commands and options come from the Typer app itself; project data from complete_sources. The
answer is one candidate per line (``value`` for bash, ``value<TAB>description`` for zsh and
fish). It never fails loudly: any problem means fewer candidates and exit code 0.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from rigcli.cli.argv import VALUE_OPTIONS, hoist
from rigcli.cli.complete_sources import Item, OperationSpec, ProjectSource, paths, provider_ids
from rigcli.cli.opargs import InputField

ALIASES = {"create": "fork", "run": "op"}
LS_TARGETS = [
    ("workspaces", "workflows and their workspaces"),
    ("snapshots", "recorded snapshots"),
    ("config", "the project's configuration"),
]
SHELLS = [("bash", "shell"), ("zsh", "shell"), ("fish", "shell")]


@dataclass
class CommandSpec:
    name: str
    help: str = ""
    options: dict[str, tuple[str, bool]] = field(default_factory=dict)  # spelling -> (help, takes a value)
    subcommands: dict[str, CommandSpec] = field(default_factory=dict)
    hidden: bool = False


def command_tree() -> CommandSpec:
    """The app's commands and options, read from the Typer app so completion never drifts from it."""
    import typer

    from rigcli.cli.app import app

    return _spec("rig", typer.main.get_command(app))


def _spec(name: str, command: object) -> CommandSpec:
    spec = CommandSpec(
        name, (getattr(command, "help", None) or "").split("\n")[0], hidden=bool(getattr(command, "hidden", False))
    )
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", "") != "option" or getattr(param, "hidden", False):
            continue
        takes_value = not getattr(param, "is_flag", False)
        for spelling in [*param.opts, *getattr(param, "secondary_opts", [])]:
            spec.options[spelling] = ((getattr(param, "help", None) or "").split("\n")[0], takes_value)
    spec.options.setdefault("--help", ("Show help.", False))
    for sub_name, sub in (getattr(command, "commands", None) or {}).items():
        spec.subcommands[sub_name] = _spec(sub_name, sub)
    return spec


@dataclass
class Position:
    """What the words before the cursor say: command path, positionals and the option awaiting a value."""

    command: str | None = None
    sub: str | None = None
    positionals: list[str] = field(default_factory=list)
    op_words: list[str] = field(default_factory=list)
    pending_option: str | None = None
    globals: dict[str, str] = field(default_factory=dict)


def read_position(tree: CommandSpec, words: Sequence[str]) -> Position:
    hoisted = hoist(list(words))  # global options sit anywhere, exactly as on a real run
    pos = Position(globals={key: value for key, value in hoisted.values.items() if isinstance(value, str)})
    words = hoisted.rest
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, has_value, _ = word.partition("=")
        if word in VALUE_OPTIONS:  # hoist leaves a value option in place only when its value is missing
            pos.pending_option = word
            continue
        if pos.command == "op":
            pos.op_words.append(word)
            continue
        if word.startswith("-"):
            owner = _current(tree, pos)
            takes_value = owner.options.get(name, ("", False))[1] or tree.options.get(name, ("", False))[1]
            if takes_value and not has_value:
                if index < len(words):
                    index += 1
                else:
                    pos.pending_option = name
            continue
        if pos.command is None:
            pos.command = ALIASES.get(word, word)
        elif pos.sub is None and tree.subcommands.get(pos.command, CommandSpec("")).subcommands:
            pos.sub = word
        else:
            pos.positionals.append(word)
    return pos


def _current(tree: CommandSpec, pos: Position) -> CommandSpec:
    command = tree.subcommands.get(pos.command or "")
    if command is None:
        return tree
    return command.subcommands.get(pos.sub or "", command)


def _options(tree: CommandSpec, pos: Position) -> list[Item]:
    own = _current(tree, pos)
    items = [(name, about) for name, (about, _) in own.options.items() if name.startswith("--")]
    if own is not tree:  # root-only flags make no sense after a command
        items += [
            (name, about)
            for name, (about, _) in tree.options.items()
            if name.startswith("--") and name not in ("--help", "--version")
        ]
    return items


def candidates(tree: CommandSpec, words: Sequence[str], current: str) -> list[Item]:
    pos = read_position(tree, words)
    source = ProjectSource(
        workflow=pos.globals.get("workflow"),
        chdir=pos.globals.get("chdir"),
        config=pos.globals.get("config"),
        state=pos.globals.get("state"),
    )
    if pos.pending_option is not None:
        return _option_values(pos.pending_option, current, source)
    if pos.command == "op":
        return _op(tree, pos, current, source)
    if current.startswith("-"):
        name, eq, value = current.partition("=")
        if eq:
            return [(f"{name}={item}", about) for item, about in _option_values(name, value, source)]
        return _options(tree, pos)
    found = _positionals(tree, pos, source)
    if found is None:  # nothing positional goes here: offer the options instead
        return [] if current else _options(tree, pos)
    return found


def _option_values(option: str, current: str, source: ProjectSource) -> list[Item]:
    if option == "--workflow":
        return source.workflows()
    if option in ("-C", "--chdir"):
        return paths(current, dirs_only=True)
    if option in ("--config", "--state", "--to"):
        return paths(current, dirs_only=False)
    return []


def _positionals(tree: CommandSpec, pos: Position, source: ProjectSource) -> list[Item] | None:
    """Candidates for the next positional; None when this command takes no known positional here."""
    command, count = pos.command, len(pos.positionals)
    if command is None or command == "help":
        return [(name, spec.help) for name, spec in tree.subcommands.items() if not spec.hidden]
    if command in ("cache", "state") and pos.sub is None:
        return [(name, spec.help) for name, spec in tree.subcommands[command].subcommands.items()]
    if command == "cache" and pos.sub in ("explain", "invalidate") and count == 0:
        return source.task_paths(valid_only=pos.sub == "invalidate")
    if command == "rm" and count == 0:
        return source.workspaces()
    if command == "ls" and count == 0:
        return LS_TARGETS
    if command == "providers" and count == 0:
        return provider_ids()
    if command == "providers" and count == 1:
        return [("clear", "forget this provider's host storage")]
    if command == "completion" and count == 0:
        return SHELLS
    return None


def _op(tree: CommandSpec, pos: Position, current: str, source: ProjectSource) -> list[Item]:
    words = pos.op_words
    if not words:
        return _options(tree, pos) if current.startswith("-") else _op_targets(current, source)
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
    found = candidates(command_tree(), words[1:index], current)
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


__all__ = ["CommandSpec", "candidates", "command_tree", "complete", "main", "read_position"]
