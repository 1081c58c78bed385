"""rig help [COMMAND...]: the help Typer renders from the table."""

from __future__ import annotations

from collections.abc import Sequence

from rigcli.cli.spec import Command, GlobalOptions
from rigcli.cli.table import TABLE
from rigcli.errors import UsageError


def help_command(opts: GlobalOptions, command: Sequence[str]) -> int:
    path, _ = resolve(command)
    from rigcli.cli.app import run

    return run([*path, "--help"])


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
