"""The vocabulary of the command table: options, arguments, commands, and the call a command line makes.

``table.py`` spells rig's command line in these words; ``app.py`` builds Typer from it,
``argv.py`` parses hot command lines with it, ``complete.py`` completes from it. No Typer here.

Plain classes with a written-out ``__init__``, not dataclasses or named tuples: those generate
and compile code each time their module is imported (a named tuple of 13 fields costs as many
instructions as the rest of this module and the table together), and this module is read on
every command line. ``Value`` gives them equality, a hash and ``replace``; ``Final`` lets mypy
refuse any later assignment.
"""

from __future__ import annotations

from collections.abc import Callable

# Not typing.TYPE_CHECKING: every command imports this table, and `rig logs TASK` answered from the cache
# imports no typing (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true. The aliases
# below are for annotations only.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Final, Literal, TypeVar

    # Where completion finds an argument's or option's values (cli/complete.py maps each to a reader).
    Source = Literal[
        "workspaces", "tasks", "valid-tasks", "workflows", "providers", "commands", "operation", "dirs", "files"
    ]
    # What a command body takes first: a Session (the project, loaded on first use) or only the options.
    Needs = Literal["session", "options"]
    Scalar = Literal["str", "int"]
    V = TypeVar("V", bound="Value")


class Value:
    """Equal, hashable and printed by the fields ``__init__`` sets; ``replace`` copies with changes."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), *vars(self).values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"{type(self).__name__}({fields})"

    def replace(self: V, **changes: object) -> V:
        unknown = changes.keys() - vars(self).keys()
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        copy = object.__new__(type(self))
        vars(copy).update(vars(self), **changes)
        return copy


class Option(Value):
    """An option: its spellings, the body parameter it fills, and what it takes."""

    def __init__(
        self,
        spellings: tuple[str, ...],
        dest: str,
        help: str,
        *,
        metavar: str | None = None,
        kind: Scalar = "str",
        choices: tuple[str, ...] = (),
        default: str | int | None = None,
        required: bool = False,
        repeat: bool = False,
        arity: int = 1,
        complete: Source | None = None,
        hidden: bool = False,
        eager: bool = False,
        minimum: int | None = None,
        maximum: int | None = None,
        error_code: int | None = None,
    ) -> None:
        self.spellings: Final = spellings  # "--yes", "-y": long first; "-C" may carry its value glued ("-CDIR")
        self.dest: Final = dest  # the body's keyword parameter (and the GlobalOptions field, for a global option)
        self.help: Final = help
        self.metavar: Final = metavar  # takes a value when set (or with choices), shown as this; else a flag
        self.kind: Final = kind  # the value's type (bodies receive it converted)
        self.choices: Final = choices  # the only values accepted (and offered by completion); shown a|b|c
        self.default: Final = default  # for a value option that is not given
        self.required: Final = required
        self.repeat: Final = repeat  # may be given several times; the body gets a tuple of every value
        self.arity: Final = arity  # words one occurrence takes (``--format svg FILE``: 2; the body gets a tuple)
        self.complete: Final = complete
        self.hidden: Final = hidden
        self.eager: Final = eager  # answered on its own when given (``--version``), whatever else the line says
        self.minimum: Final = minimum  # the bounds of an int option's value, both included
        self.maximum: Final = maximum
        # A flag that, given, makes every error of the line exit with this code, usage errors included
        # (``plan --detailed-exitcode``: 1, so that 2 always means "pending").
        self.error_code: Final = error_code

    @property
    def flag(self) -> bool:
        return self.metavar is None and not self.choices

    def integer(self, raw: str) -> int:
        """``raw`` as this int option's value; a ValueError says, in one line, what is wrong with it."""
        name = self.spellings[0]
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"{name} must be a whole number, not {raw!r}") from None
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            allowed = (
                f"between {low} and {high}"
                if low is not None and high is not None
                else f"at least {low}"
                if low is not None
                else f"at most {high}"
            )
            raise ValueError(f"{name} must be {allowed}, not {raw}")
        return value

    @property
    def shown(self) -> str:
        """How help writes the option: its spellings, shortest first, and its value."""
        value = self.metavar or "|".join(self.choices)
        return ", ".join(sorted(self.spellings, key=len)) + (f" {value}" if value else "")


class Argument(Value):
    """A positional argument, in the order the command takes them."""

    def __init__(
        self,
        dest: str,
        metavar: str,
        help: str,
        *,
        required: bool = False,
        variadic: bool = False,
        complete: Source | None = None,
        suggest: tuple[tuple[str, str], ...] = (),
        hidden: bool = False,
    ) -> None:
        self.dest: Final = dest
        self.metavar: Final = metavar
        self.help: Final = help
        self.required: Final = required
        self.variadic: Final = variadic  # takes every remaining word (the body gets a tuple); the last argument only
        self.complete: Final = complete
        self.suggest: Final = suggest  # (value, description) pairs completion offers; not enforced
        self.hidden: Final = hidden


class Command(Value):
    """A command (or, with ``commands``, a group of sub-commands) and the body it calls."""

    def __init__(
        self,
        name: str,
        help: str,
        body: str = "",
        *,
        needs: Needs = "session",
        arguments: tuple[Argument, ...] = (),
        options: tuple[Option, ...] = (),
        aliases: tuple[str, ...] = (),
        hidden: bool = False,
        hot: bool = False,
        pass_through: bool = False,
        examples: tuple[tuple[str, str], ...] = (),
        commands: tuple[Command, ...] = (),
        cache: tuple[str, ...] = (),
    ) -> None:
        self.name: Final = name
        self.help: Final = help  # one sentence: the help list, completion and `rig help --json` show it whole
        self.body: Final = body  # "module:function", imported only when the command runs; "" for a group
        self.needs: Final = needs
        self.arguments: Final = arguments
        self.options: Final = options
        self.aliases: Final = aliases  # other names: same body, same parameters, hidden from lists
        self.hidden: Final = hidden
        self.hot: Final = hot  # dispatched by the fast path without Typer (plain, valid lines; help goes to Typer)
        # Every word after the command goes untouched to the (one, variadic) argument, --help too,
        # which the body answers itself. For `rig op`, whose inputs are the project's.
        self.pass_through: Final = pass_through
        self.examples: Final = examples  # (command line, what it does), shown in the help
        self.commands: Final = commands  # a group's sub-commands
        # The remembered answers (rigcli/cache/answers.py) the body may be given without loading the
        # config, while their gates hold; a test runs the command both ways and compares.
        self.cache: Final = cache

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

    def error_code(self, values: dict[str, object]) -> int | None:
        """The code every error exits with when ``values`` (dest -> value) give a flag that asks for one."""
        return next(
            (item.error_code for item in self.options if item.error_code is not None and values.get(item.dest) is True),
            None,
        )

    def examples_text(self) -> str:
        width = max((len(line) for line, _ in self.examples), default=0)
        return "\n".join(f"  {line.ljust(width)}   {about}" for line, about in self.examples)


class GlobalOptions(Value):
    """The global options of one command line (``-C``, ``--config``, ``--state``, ``--json``, ...).

    One parameter per option of ``table.GLOBAL_OPTIONS`` but ``--version``, named by its
    ``dest``, with its default (a test checks they agree).
    """

    def __init__(
        self,
        *,
        chdir: str | None = None,
        config: str | None = None,
        state: str | None = None,
        json: bool = False,
        workflow: str | None = None,
        no_wait: bool = False,
        progress: str = "auto",
        json_stream: bool = False,
    ) -> None:
        self.chdir: Final = chdir
        self.config: Final = config
        self.state: Final = state
        self.json: Final = json or json_stream  # a stream's summary is the --json document
        self.workflow: Final = workflow
        self.no_wait: Final = no_wait
        self.progress: Final = progress  # auto | tty | plain (how a run is shown on stderr)
        self.json_stream: Final = json_stream  # stdout: one JSON event per line, the summary last

    @property
    def interactive(self) -> bool:
        """Prompts and pickers are allowed: a terminal on stdin and stderr, and not --json."""
        from rigcli.host import stdio_is_terminal

        return not self.json and stdio_is_terminal()


class Table(Value):
    """The whole command line: global options (accepted anywhere before ``--``) and commands."""

    def __init__(
        self,
        name: str,
        help: str,
        options: tuple[Option, ...],
        commands: tuple[Command, ...],
        options_type: Callable[..., GlobalOptions],  # makes the record of the global options from their values
    ) -> None:
        self.name: Final = name
        self.help: Final = help
        self.options: Final = options
        self.commands: Final = commands
        self.options_type: Final = options_type

    @property
    def root(self) -> Command:
        """The table as one command whose sub-commands are the top-level commands."""
        return Command(self.name, self.help, options=self.options, commands=self.commands)

    def option(self, spelling: str) -> Option | None:
        return next((item for item in self.options if spelling in item.spellings), None)


class Call(Value):
    """What a command line asks for: which body, with which parameters, under which global options.

    The fast path and the Typer app each make one of the same argv; the parity test checks they
    make the same.
    """

    def __init__(
        self,
        path: tuple[str, ...],
        body: str,
        needs: Needs,
        kwargs: dict[str, object],
        opts: GlobalOptions,
        cache: tuple[str, ...] = (),
        error_code: int | None = None,
    ) -> None:
        self.path: Final = path  # the command's canonical names, e.g. ("cache", "invalidate")
        self.body: Final = body
        self.needs: Final = needs
        self.cache: Final = cache  # the command's row's
        self.kwargs: Final = kwargs
        self.opts: Final = opts
        self.error_code: Final = error_code  # ``Command.error_code`` of the line: every error's exit code


__all__ = ["Argument", "Call", "Command", "GlobalOptions", "Needs", "Option", "Source", "Table", "Value"]
