"""Command lines generated from a command table, and the check that the fast path and Typer read them alike.

For every hot command, under each of its names (aliases included, at every level of a group),
the lines use every argument shape and every spelling of every option; each is then tried with
no global option and with each spelling of each global option placed before the command, between
the command and its arguments, and at the end (before any ``--``).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rigcli.cli.app import run
from rigcli.cli.argv import match
from rigcli.cli.spec import Call, Command, Option, Table

# What `rig op` hands on untouched: plain words, flags, its own --help, a `--` in front or inside.
PASS_THROUGH_SAMPLES: tuple[tuple[str, ...], ...] = (
    (),
    ("dev",),
    ("dev", "test", "--bail", "--retries", "2"),
    ("dev/greet", "bob", "--tone=warm"),
    ("status",),
    ("--help",),
    ("dev", "--help"),
    ("dev", "test", "-h"),
    ("--", "dev", "test"),
    ("dev", "--", "x"),
    ("-x", "dev"),
)


@dataclass(frozen=True)
class Line:
    path: tuple[str, ...]  # the command's words as typed (an alias, perhaps)
    rest: tuple[str, ...]  # its arguments and options

    def with_global(self, words: tuple[str, ...], where: str) -> tuple[str, ...]:
        if where == "before":
            return (*words, *self.path, *self.rest)
        if where == "between":
            return (*self.path, *words, *self.rest)
        cut = self.rest.index("--") if "--" in self.rest else len(self.rest)  # after `--` is not an option
        return (*self.path, *self.rest[:cut], *words, *self.rest[cut:])


def hot_commands(table: Table) -> Iterator[tuple[list[tuple[str, ...]], Command]]:
    """Each hot command with every way to name it (each name or alias at each level)."""

    def walk(
        commands: tuple[Command, ...], prefixes: list[tuple[str, ...]]
    ) -> Iterator[tuple[list[tuple[str, ...]], Command]]:
        for command in commands:
            spellings = [(*prefix, name) for prefix in prefixes for name in command.names]
            if command.commands:
                yield from walk(command.commands, spellings)
            elif command.hot:
                yield spellings, command

    yield from walk(table.commands, [()])


def values_of(option: Option) -> list[tuple[str, ...]]:
    base = list(option.choices) or (["3"] if option.kind == "int" else [f"{option.dest}-value"])
    return [(value,) * option.arity for value in base]


def option_forms(option: Option) -> list[tuple[str, ...]]:
    """Every way to write the option once: each spelling; a value apart, after `=` or glued."""
    if option.flag:
        return [(spelling,) for spelling in option.spellings]
    forms: list[tuple[str, ...]] = []
    for value in values_of(option):
        for spelling in option.spellings:
            forms.append((spelling, *value))
            if option.arity != 1:
                continue
            if spelling.startswith("--"):
                forms.append((f"{spelling}={value[0]}",))
            else:
                forms.append((f"{spelling}{value[0]}",))
                if option.kind == "str" and not option.choices:
                    forms.append((f"{spelling}={value[0]}",))  # click (and so rig) reads the value "=..."
    return forms


def argument_forms(command: Command) -> list[tuple[str, ...]]:
    if command.pass_through:
        return list(PASS_THROUGH_SAMPLES)
    variadic = next((item for item in command.arguments if item.variadic), None)
    tail = ("v1",) if variadic is not None and variadic.required else ()
    required = tuple(f"{item.dest}-1" for item in command.arguments if item.required and not item.variadic)
    every = tuple(f"{item.dest}-1" for item in command.arguments if not item.variadic)
    forms = [(*required, *tail), (*every, *tail)]
    if variadic is not None:  # several words, and words after `--` that look like options
        forms += [(*every, "v1", "v2"), (*every, "--", "v1", "-v2", "--")]
    return list(dict.fromkeys(forms))


def command_lines(table: Table) -> list[Line]:
    lines: list[Line] = []
    for spellings, command in hot_commands(table):
        needed = tuple(word for item in command.options if item.required for word in option_forms(item)[0])
        for path in spellings:
            for arguments in argument_forms(command):
                lines.append(Line(path, (*needed, *arguments)))
                # Options after the arguments too: before a `--` (after it every word is an argument)
                cut = arguments.index("--") if "--" in arguments else len(arguments)
                plain, after = arguments[:cut], arguments[cut:]
                for option in command.options:
                    for form in option_forms(option):
                        lines.append(Line(path, (*needed, *form, *arguments)))
                        lines.append(Line(path, (*needed, *plain, *form, *after)))
                    if option.repeat:
                        lines.append(Line(path, (*needed, *option_forms(option)[0], *option_forms(option)[-1])))
            everything = tuple(word for item in command.options for word in option_forms(item)[0])
            lines.append(Line(path, (*everything, *argument_forms(command)[-1])))
    return list(dict.fromkeys(lines))


def global_forms(table: Table) -> list[tuple[str, ...]]:
    """Each spelling of each global option (not --version: it prints the version whatever else is said)."""
    forms = [form for option in table.options if not option.eager for form in option_forms(option)]
    every = tuple(word for option in table.options if not option.eager for word in option_forms(option)[0])
    return [*forms, every]


def argv_lines(table: Table) -> list[tuple[str, ...]]:
    """The parity test's command lines: every command line, alone and with every global option anywhere."""
    argvs: list[tuple[str, ...]] = []
    for line in command_lines(table):
        argvs.append((*line.path, *line.rest))
        for words in global_forms(table):
            for where in ("before", "between", "after"):
                argvs.append(line.with_global(words, where))
    return list(dict.fromkeys(argvs))


def typer_calls(table: Table, argvs: list[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[Call | None, str]]:
    """The call the Typer app makes of each line (no body runs), or None and what Typer said."""
    calls: list[Call] = []

    def capture(call: Call) -> int:  # one function for every line, so the app is built once
        calls.append(call)
        return 0

    found: dict[tuple[str, ...], tuple[Call | None, str]] = {}
    for argv in argvs:
        calls.clear()
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = run(list(argv), table=table, invoke=capture)
        found[argv] = (calls[0] if len(calls) == 1 and code == 0 else None), out.getvalue()
    return found


def mismatches(
    expected: dict[tuple[str, ...], tuple[Call | None, str]], fast: Callable[[list[str]], Call | None]
) -> list[str]:
    """Every line Typer and the fast path do not read alike: both must accept it, and make one call."""
    problems = []
    for argv, (by_typer, said) in expected.items():
        by_fast = fast(list(argv))
        line = "rig " + " ".join(argv)
        if by_typer is None:
            problems.append(f"{line}: Typer rejects a generated line: {said.strip()}")
        elif by_fast is None:
            problems.append(f"{line}: the fast path does not take it")
        elif by_fast != by_typer:
            problems.append(f"{line}:\n  fast:  {by_fast}\n  Typer: {by_typer}")
    return problems


def fast_path(table: Table) -> Callable[[list[str]], Call | None]:
    return lambda argv: match(argv, table)


__all__ = ["argv_lines", "command_lines", "fast_path", "hot_commands", "mismatches", "typer_calls"]
