"""The vocabulary of the command table: options, arguments, commands, and the call a command line makes.

``table.py`` spells rig's command line in these words; ``app.py`` builds Typer from it,
``argv.py`` parses hot command lines with it, ``complete.py`` completes from it. Named tuples,
not dataclasses: a frozen dataclass generates its methods when its module is imported (about a
millisecond each), and this module is read on every command line. No Typer here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

# Where completion finds an argument's or option's values (cli/complete.py maps each to a reader).
Source = Literal[
    "workspaces", "tasks", "valid-tasks", "workflows", "providers", "commands", "operation", "dirs", "files"
]
# What a command body takes first: a Session (the project, loaded on first use) or only the options.
Needs = Literal["session", "options"]
Scalar = Literal["str", "int"]


class Option(NamedTuple):
    """An option: its spellings, the body parameter it fills, and what it takes."""

    spellings: tuple[str, ...]  # "--yes", "-y": long first; a single-letter one may carry its value glued ("-CDIR")
    dest: str  # the body's keyword parameter (and the GlobalOptions field, for a global option)
    help: str
    metavar: str | None = None  # takes a value when set (or with choices), shown as this; else a flag
    kind: Scalar = "str"  # the value's type (bodies receive it converted)
    choices: tuple[str, ...] = ()  # the only values accepted (and offered by completion); shown a|b|c
    default: str | int | None = None  # for a value option that is not given
    required: bool = False
    repeat: bool = False  # may be given several times; the body gets a tuple of every value
    arity: int = 1  # words one occurrence takes (``--format svg FILE`` takes 2; the body gets a tuple)
    complete: Source | None = None
    hidden: bool = False
    eager: bool = False  # answered on its own when given (``--version``), whatever else the line says

    @property
    def flag(self) -> bool:
        return self.metavar is None and not self.choices

    @property
    def shown(self) -> str:
        """How help writes the option: its spellings, shortest first, and its value."""
        value = self.metavar or "|".join(self.choices)
        return ", ".join(sorted(self.spellings, key=len)) + (f" {value}" if value else "")


class Argument(NamedTuple):
    """A positional argument, in the order the command takes them."""

    dest: str
    metavar: str
    help: str
    required: bool = False
    variadic: bool = False  # takes every remaining word (the body gets a tuple); the last argument only
    complete: Source | None = None
    suggest: tuple[tuple[str, str], ...] = ()  # (value, description) completion offers; not enforced
    hidden: bool = False


class Command(NamedTuple):
    """A command (or, with ``commands``, a group of sub-commands) and the body it calls."""

    name: str
    help: str  # one sentence: the help list, completion and ``rig help --json`` show it whole
    body: str = ""  # "module:function", imported only when the command runs; "" for a group
    needs: Needs = "session"
    arguments: tuple[Argument, ...] = ()
    options: tuple[Option, ...] = ()
    aliases: tuple[str, ...] = ()  # other names: same body, same parameters, hidden from lists
    hidden: bool = False
    hot: bool = False  # dispatched by the fast path without Typer (plain, valid lines; help goes to Typer)
    # Every word after the command goes untouched to the (one, variadic) argument: --help too,
    # which the body answers itself. For ``rig op``, whose inputs are the project's.
    pass_through: bool = False
    examples: tuple[tuple[str, str], ...] = ()  # (command line, what it does), shown in the help
    commands: tuple[Command, ...] = ()  # a group's sub-commands

    @property
    def summary(self) -> str:
        """The one sentence, naming the aliases: what lists show."""
        if not self.aliases:
            return self.help
        return f"{self.help.removesuffix('.')} (alias: {', '.join(self.aliases)})."

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def subcommand(self, word: str) -> Command | None:
        """The sub-command ``word`` names (its name or an alias), if any."""
        return next((item for item in self.commands if word in item.names), None)

    def option(self, spelling: str) -> Option | None:
        return next((item for item in self.options if spelling in item.spellings), None)

    def examples_text(self) -> str:
        width = max((len(line) for line, _ in self.examples), default=0)
        return "\n".join(f"  {line.ljust(width)}   {about}" for line, about in self.examples)


class Table(NamedTuple):
    """The whole command line: global options (accepted anywhere before ``--``) and commands."""

    name: str
    help: str
    options: tuple[Option, ...]
    commands: tuple[Command, ...]
    options_type: Callable[..., GlobalOptions]  # makes the record of the global options from their values

    @property
    def root(self) -> Command:
        """The table as one command whose sub-commands are the top-level commands."""
        return Command(self.name, self.help, options=self.options, commands=self.commands)

    def option(self, spelling: str) -> Option | None:
        return next((item for item in self.options if spelling in item.spellings), None)


class GlobalOptions(NamedTuple):
    """The global options of one command line (``-C``, ``--config``, ``--state``, ``--json``, ...).

    One field per option of ``table.GLOBAL_OPTIONS`` but ``--version``, named by its ``dest``,
    with its default (a test checks they agree).
    """

    chdir: str | None = None
    config: str | None = None
    state: str | None = None
    json: bool = False
    workflow: str | None = None
    no_wait: bool = False

    @property
    def interactive(self) -> bool:
        """Prompts and pickers are allowed: a terminal on stdin and stderr, and not --json."""
        from rigcli.host import stdio_is_terminal

        return not self.json and stdio_is_terminal()


class Call(NamedTuple):
    """What a command line asks for: which body, with which parameters, under which global options.

    The fast path and the Typer app each produce one from the same argv; the parity test
    checks they produce the same.
    """

    path: tuple[str, ...]  # the command's canonical names, e.g. ("cache", "invalidate")
    body: str
    needs: Needs
    kwargs: dict[str, object]
    opts: GlobalOptions


__all__ = ["Argument", "Call", "Command", "GlobalOptions", "Needs", "Option", "Source", "Table"]
