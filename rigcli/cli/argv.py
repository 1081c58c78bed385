"""Reading a command line by the table, without Typer: global options lifted, hot command lines parsed.

Global options may sit anywhere before ``--``; ``hoist`` moves them in front of the command
(for Typer) and reads their values (for the fast path and completion). ``match`` turns a plain,
valid command line of a hot command into the ``Call`` Typer would make of it, exactly as click
reads it, or returns None: help, an unknown or malformed option, a missing or extra argument —
anything it does not fully understand goes to Typer, which says what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from rigcli.cli.spec import Argument, Call, Command, Option, Table
from rigcli.cli.table import TABLE


class Hoisted:
    """The command line split into global options (in front) and everything else (in order)."""

    def __init__(self) -> None:
        self.globals: list[str] = []
        self.rest: list[str] = []
        self.values: dict[str, str | bool] = {}  # dest -> the raw value (True for a flag); the last one wins

    @property
    def argv(self) -> list[str]:
        return [*self.globals, *self.rest]


def hoist(argv: Sequence[str], table: Table = TABLE) -> Hoisted:
    """Lift the table's global options out of ``argv``; nothing after ``--`` is touched.

    A value option with its value missing at the very end is left in place so the parser
    reports it the usual way.
    """
    result = Hoisted()
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if token == "--":
            result.rest.extend(argv[index - 1 :])
            break
        option = table.option(token)
        if option is not None and option.flag:
            result.globals.append(token)
            result.values[option.dest] = True
        elif option is not None and index < len(argv):
            result.globals.extend([token, argv[index]])
            result.values[option.dest] = argv[index]
            index += 1
        elif option is None and (glued := _glued(table, token)) is not None:
            result.globals.append(token)
            result.values[glued[0].dest] = glued[1]
        else:
            result.rest.append(token)
    return result


def _glued(table: Table, token: str) -> tuple[Option, str] | None:
    """``--state=FILE`` or ``-CDIR`` (click reads ``-C=DIR`` as the value ``=DIR``; so does this)."""
    if token.startswith("--"):
        name, eq, value = token.partition("=")
        option = table.option(name) if eq else None
    else:
        option, value = table.option(token[:2]), token[2:]
    if option is None or option.flag or (not value and not token.startswith("--")):
        return None
    return option, value


def match(argv: Sequence[str], table: Table = TABLE) -> Call | None:
    """The call a hot command line makes, or None when it is not one (or not plainly valid)."""
    hoisted = hoist(argv, table)
    globals_ = _global_values(table, hoisted.values)
    found = _command(table, hoisted.rest)
    if globals_ is None or found is None:
        return None
    path, command, words = found
    if not command.hot or not command.body:
        return None
    kwargs = parse(command, words)
    if kwargs is None:
        return None
    opts = table.options_type(**globals_)
    return Call(path, command.body, command.needs, kwargs, opts, command.cache, command.error_code(kwargs))


def line_error_code(argv: Sequence[str], table: Table = TABLE) -> int | None:
    """The code every error of this line exits with, read from its words alone (for a line that
    could not be read as a whole): ``Command.error_code`` of the flags it gives before any ``--``."""
    found = _command(table, hoist(argv, table).rest)
    if found is None:
        return None
    _, command, words = found
    given: dict[str, object] = {}
    for word in words[: words.index("--")] if "--" in words else words:
        option = _own_option(command, word)[0] if word.startswith("-") else None
        if option is not None and option.flag:
            given[option.dest] = True
    return command.error_code(given)


def _command(table: Table, words: list[str]) -> tuple[tuple[str, ...], Command, list[str]] | None:
    """The command the leading words name (through groups and aliases), and the words after it."""
    command = table.root
    path: tuple[str, ...] = ()
    index = 0
    while command.commands:
        sub = command.subcommand(words[index]) if index < len(words) else None
        if sub is None:
            return None
        command, path = sub, (*path, sub.name)
        index += 1
    return path, command, words[index:]


def _global_values(table: Table, raw: dict[str, str | bool]) -> dict[str, object] | None:
    values: dict[str, object] = {}
    for option in table.options:
        given = raw.get(option.dest)
        if option.eager:
            if given is not None:
                return None  # --version answers on its own; Typer does that
            continue
        if given is None:
            values[option.dest] = False if option.flag else option.default
        elif isinstance(given, bool):
            values[option.dest] = given
        else:
            converted = _convert(option, given)
            if converted is None:
                return None
            values[option.dest] = converted
    return values


def parse(command: Command, words: Sequence[str]) -> dict[str, object] | None:
    """The body's keyword arguments from the words after the command, read as click reads them."""
    if command.pass_through:
        return {command.arguments[0].dest: _pass_through(words)}
    values: dict[str, object] = {
        option.dest: False if option.flag else () if option.repeat else option.default for option in command.options
    }
    positionals: list[str] = []
    only_positionals = False
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if only_positionals or not word.startswith("-") or word == "-":
            positionals.append(word)
            continue
        if word == "--":
            only_positionals = True
            continue
        option, glued = _own_option(command, word)
        if option is None:
            return None
        if option.flag:
            if glued is not None:
                return None
            values[option.dest] = True
            continue
        if glued is not None:
            if option.arity != 1:
                return None
            raw: tuple[str, ...] = (glued,)
        else:
            if index + option.arity > len(words):
                return None
            raw = tuple(words[index : index + option.arity])
            index += option.arity
        converted = [_convert(option, item) for item in raw]
        if any(item is None for item in converted):
            return None
        value = converted[0] if option.arity == 1 else tuple(converted)
        previous = values[option.dest]
        values[option.dest] = (*previous, value) if option.repeat and isinstance(previous, tuple) else value
    if any(option.required and values[option.dest] in (None, ()) for option in command.options):
        return None
    assigned = _assign(command.arguments, positionals)
    if assigned is None:
        return None
    return {**values, **assigned}


def _own_option(command: Command, word: str) -> tuple[Option | None, str | None]:
    """The command's option ``word`` spells, and the value glued to it (``--to=X``, ``-nX``)."""
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return command.option(name), value if eq else None
    if len(word) == 2:
        return command.option(word), None
    option = command.option(word[:2])
    if option is None or option.flag:
        return None, None  # "-yf" (clustered flags) is Typer's to read
    return option, word[2:]


def _convert(option: Option, raw: str) -> object | None:
    if option.choices and raw not in option.choices:
        return None
    if option.kind == "int":
        try:
            return option.integer(raw)
        except ValueError:
            return None  # Typer says what is wrong with it
    return raw


def _assign(arguments: Sequence[Argument], words: list[str]) -> dict[str, object] | None:
    values: dict[str, object] = {}
    remaining = list(words)
    for argument in arguments:
        if argument.variadic:
            values[argument.dest], remaining = tuple(remaining), []
        else:
            values[argument.dest] = remaining.pop(0) if remaining else None
        if argument.required and values[argument.dest] in (None, ()):
            return None
    return None if remaining else values


def _pass_through(words: Sequence[str]) -> tuple[str, ...]:
    """Every word, as click hands them on with unknown options ignored and no interspersed
    arguments: only a ``--`` before the first plain word is dropped."""
    for index, word in enumerate(words):
        if word == "--":
            return (*words[:index], *words[index + 1 :])
        if not word.startswith("-") or word == "-":
            break
    return tuple(words)


__all__ = ["Hoisted", "hoist", "line_error_code", "match", "parse"]
