"""rig help [COMMAND...]: the help Typer renders from the table, or (--json) the commands as JSON."""

from __future__ import annotations

from collections.abc import Sequence

from rigcli._version import __version__
from rigcli.cli.output import emit_json
from rigcli.cli.spec import Command, GlobalOptions
from rigcli.cli.table import TABLE
from rigcli.errors import UsageError


def help_command(opts: GlobalOptions, command: Sequence[str]) -> int:
    path, found = resolve(command)
    if not opts.json:
        from rigcli.cli.app import run

        return run([*path, "--help"])
    document: dict[str, object] = {"name": " ".join([TABLE.name, *path]), "version": __version__}
    if path:
        document["description"] = found.summary
    document["commands"] = [
        {"name": item.name, "description": item.summary} for item in found.commands if not item.hidden
    ]
    emit_json(document)
    return 0


def resolve(words: Sequence[str]) -> tuple[list[str], Command]:
    """The command ``words`` name (aliases resolved to the command's name) and its canonical path."""
    command, path = TABLE.root, []
    for word in words:
        sub = command.subcommand(word)
        if sub is None:
            raise UsageError(f"No such command '{word}'.")
        command = sub
        path.append(sub.name)
    return path, command


__all__ = ["help_command", "resolve"]
