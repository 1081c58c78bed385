"""The command table: the fast path and Typer read every hot command line alike, and the table is well formed."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.cli.argv import match
from rigcli.cli.invoke import load_body
from rigcli.cli.spec import Call, Command, GlobalOptions, Table
from rigcli.cli.table import TABLE
from tests.cli.cli_support import run_rig
from tests.cli.table_lines import argv_lines, fast_path, global_forms, hot_commands, mismatches, typer_calls

Expected = dict[tuple[str, ...], tuple[Call | None, str]]


@pytest.fixture(scope="module")
def expected() -> Expected:
    """What Typer makes of every generated line of the real table (computed once: ~2,000 lines)."""
    return typer_calls(TABLE, argv_lines(TABLE))


def test_fast_path_and_typer_read_every_hot_line_alike(expected: Expected) -> None:
    problems = mismatches(expected, fast_path(TABLE))
    assert not problems, f"{len(problems)} of {len(expected)} lines differ:\n" + "\n".join(problems[:30])


def test_the_lines_cover_every_hot_name_and_every_global_spelling(expected: Expected) -> None:
    # Guards the generator itself: a line set that lost a command or a spelling would pass vacuously.
    lines = set(expected)
    for spellings, _ in hot_commands(TABLE):
        for path in spellings:
            assert any(line[: len(path)] == path for line in lines), path
    for form in global_forms(TABLE):
        for where in ("before", "after"):
            assert any(_contains(line, form) and (line[0] == form[0]) == (where == "before") for line in lines)
    assert {"-CDIR", "-Cchdir-value", "--chdir=chdir-value"} & {word for line in lines for word in line}
    assert ("create",) in {line[:1] for line in lines} and ("run",) in {line[:1] for line in lines}
    assert len(lines) > 1000


def _contains(line: tuple[str, ...], words: tuple[str, ...]) -> bool:
    return any(line[index : index + len(words)] == words for index in range(len(line)))


def _aliases(table: Table) -> Iterator[tuple[str, str]]:
    def walk(commands: tuple[Command, ...]) -> Iterator[tuple[str, str]]:
        for command in commands:
            yield from ((command.name, alias) for alias in command.aliases)
            yield from walk(command.commands)

    yield from walk(table.commands)


def _without_alias(commands: tuple[Command, ...], alias: str) -> tuple[Command, ...]:
    return tuple(
        item.replace(
            aliases=tuple(name for name in item.aliases if name != alias), commands=_without_alias(item.commands, alias)
        )
        for item in commands
    )


@pytest.mark.parametrize(("command", "alias"), list(_aliases(TABLE)))
def test_the_check_fails_when_the_fast_path_loses_an_alias(expected: Expected, command: str, alias: str) -> None:
    # The fast path reads its own copy of the table without the alias; Typer keeps it.
    broken = TABLE.replace(commands=_without_alias(TABLE.commands, alias))
    problems = mismatches(expected, fast_path(broken))
    assert problems, f"removing alias {alias} of {command} from the fast path went unnoticed"
    assert all(alias in problem.partition(":")[0].split() for problem in problems)


@pytest.mark.parametrize(
    "spelling", [spelling for option in TABLE.options if not option.eager for spelling in option.spellings]
)
def test_the_check_fails_when_the_fast_path_loses_a_global_option(expected: Expected, spelling: str) -> None:
    options = tuple(
        item.replace(spellings=tuple(name for name in item.spellings if name != spelling)) for item in TABLE.options
    )
    problems = mismatches(expected, fast_path(TABLE.replace(options=options)))
    assert problems, f"removing {spelling} from the fast path went unnoticed"
    assert all(spelling in problem for problem in problems)


@pytest.mark.parametrize(
    "words",
    [
        ["plan", "--help"],
        ["apply", "-h"],
        ["apply", "--dry-run=yes"],
        ["apply", "--bogus"],
        ["plan", "extra"],
        ["fork", "a", "b"],
        ["rm", "-yf"],
        ["ls", "--all"],
        ["--version", "plan"],
        ["plan", "-V"],
        ["help", "--bogus"],
        ["cache", "ls"],  # not hot
        ["doctor"],
        ["frobnicate"],
        ["-C"],
        [],
    ],
)
def test_the_fast_path_leaves_help_mistakes_and_cold_commands_to_typer(words: list[str]) -> None:
    assert match(words) is None


def test_a_bad_line_is_one_typer_rejects() -> None:
    # What the fast path leaves must be what Typer reports: these are errors, not calls.
    found = typer_calls(TABLE, [("apply", "--bogus"), ("fork", "a", "b"), ("apply", "--dry-run=yes")])
    for argv, (call, said) in found.items():
        assert call is None and said.startswith("error: "), argv


def test_a_glued_short_option_means_the_same_to_every_command(tmp_path: Path) -> None:
    # -C=DIR is read as click reads it (the directory "=DIR") by hot and other commands alike;
    # the fast path used to read it as DIR, so `rig -C=. plan` and `rig -C=. cache ls` disagreed.
    (tmp_path / "rig_config.py").write_text("from rigcli import sequence\nworkflows = sequence('w')\n")
    hot = run_rig("-C=.", "plan", cwd=tmp_path, subprocess=True)
    cold = run_rig("-C=.", "cache", "ls", cwd=tmp_path, subprocess=True)
    assert hot.returncode == cold.returncode == 1
    assert hot.stderr == cold.stderr == f"error: No such directory: {tmp_path}/=.\n"


# -- the table is well formed -------------------------------------------------------------------


def _leaves(commands: tuple[Command, ...]) -> Iterator[Command]:
    for command in commands:
        yield from _leaves(command.commands) if command.commands else (command,)


@pytest.mark.parametrize("command", list(_leaves(TABLE.commands)), ids=lambda command: command.name)
def test_every_body_takes_exactly_the_table_parameters(command: Command) -> None:
    body = load_body(command.body)
    values = {item.dest: None for item in (*command.arguments, *command.options)}
    first = GlobalOptions() if command.needs == "options" else object()
    inspect.signature(body).bind(first, **values)  # raises TypeError on a missing or unknown parameter
    required = [
        name
        for index, (name, param) in enumerate(inspect.signature(body).parameters.items())
        if index > 0 and param.default is inspect.Parameter.empty
    ]
    assert set(required) <= set(values), (command.name, required)


def test_global_options_are_the_fields_of_global_options() -> None:
    fields = {name: param.default for name, param in inspect.signature(GlobalOptions).parameters.items()}
    options = {item.dest: False if item.flag else item.default for item in TABLE.options if not item.eager}
    assert options == fields


def _every_command(commands: tuple[Command, ...]) -> Iterator[Command]:
    for command in commands:
        yield command
        yield from _every_command(command.commands)


def test_the_table_is_well_formed() -> None:
    global_spellings = {spelling for item in TABLE.options for spelling in item.spellings}
    names = [name for item in TABLE.commands for name in item.names]
    assert len(names) == len(set(names))
    for command in _every_command(TABLE.commands):
        assert command.help.strip() and command.help.endswith("."), command.name
        assert bool(command.body) != bool(command.commands), command.name  # a body or sub-commands
        own = {spelling for item in command.options for spelling in item.spellings}
        assert not own & global_spellings, command.name  # global options are lifted from anywhere
        dests = [item.dest for item in (*command.arguments, *command.options)]
        assert len(dests) == len(set(dests)), command.name
        assert all(not item.variadic for item in command.arguments[:-1]), command.name
        optional = [not item.required for item in command.arguments if not item.variadic]
        assert optional == sorted(optional), command.name  # required arguments come first
        if command.pass_through:
            assert not command.options and [item.variadic for item in command.arguments] == [True]
        for option in (*command.options, *TABLE.options):
            assert option.spellings[0].startswith("--") and option.help, option
            assert all(len(name) == 2 for name in option.spellings if not name.startswith("--")), option
