"""docs/commands.md is the command table rendered: current, complete, and following every new row."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from rigcli.cli.reference import REGENERATE, render_commands_markdown
from rigcli.cli.spec import Argument, Command, Option, Table
from rigcli.cli.table import TABLE
from tests.cli.cli_support import REPO_ROOT, run_rig

REFERENCE = REPO_ROOT / "docs" / "commands.md"


def _commands(table: Table) -> list[tuple[tuple[str, ...], Command]]:
    found: list[tuple[tuple[str, ...], Command]] = []

    def visit(prefix: tuple[str, ...], commands: tuple[Command, ...]) -> None:
        for command in commands:
            found.append(((*prefix, command.name), command))
            visit((*prefix, command.name), command.commands)

    visit((table.name,), table.commands)
    return found


def _section(text: str, path: tuple[str, ...]) -> str:
    """The text under the heading of ``path``, up to the next heading of a command."""
    heading = re.search(rf"^#+ `{re.escape(' '.join(path))}`\n", text, flags=re.M)
    assert heading, f"no heading for {' '.join(path)}"
    rest = text[heading.end() :]
    following = re.search(r"^#+ `rig ", rest, flags=re.M)
    return rest[: following.start()] if following else rest


def test_docs_commands_md_is_the_table_rendered_now() -> None:
    written = REFERENCE.read_text(encoding="utf-8") if REFERENCE.exists() else ""
    assert written == render_commands_markdown(TABLE), (
        f"docs/commands.md is stale: regenerate it with `{REGENERATE}` from the repository's root"
    )


def test_the_module_writes_the_page_it_renders(tmp_path: Path) -> None:
    target = tmp_path / "commands.md"
    subprocess.run([sys.executable, "-m", "rigcli.cli.reference", str(target)], check=True, cwd=REPO_ROOT)
    assert target.read_text(encoding="utf-8") == render_commands_markdown(TABLE)
    printed = subprocess.run(
        [sys.executable, "-m", "rigcli.cli.reference"], check=True, cwd=REPO_ROOT, capture_output=True
    )
    assert printed.stdout.decode() == render_commands_markdown(TABLE)


def test_every_command_in_rig_help_has_its_section(tmp_path: Path) -> None:
    """What `rig --help` and each group's --help list, read from the installed rig, not from the table."""
    reference = REFERENCE.read_text(encoding="utf-8")
    help_text = run_rig("--help", cwd=tmp_path, subprocess=True).stdout
    commands = re.findall(r"^  (\w+)\s{2,}", help_text.split("Commands:", 1)[1], flags=re.M)
    assert len(commands) > 10
    for command in commands:
        assert f"## `rig {command}`\n" in reference, command
        assert f"[`rig {command}`](#rig-{command})" in reference, command
    for group in ("cache", "state"):
        group_help = run_rig(group, "--help", cwd=tmp_path, subprocess=True).stdout
        subcommands = re.findall(r"^  (\w+)\s{2,}", group_help.split("Commands:", 1)[1], flags=re.M)
        assert len(subcommands) >= 3, group
        for sub in subcommands:
            assert f"### `rig {group} {sub}`\n" in reference, (group, sub)


def test_every_option_argument_alias_and_example_is_in_its_section() -> None:
    reference = REFERENCE.read_text(encoding="utf-8")
    for option in TABLE.options:
        assert f"`{option.shown}`".replace("|", "\\|") in reference, option.spellings
        assert option.help in reference, option.spellings
    for path, command in _commands(TABLE):
        section = _section(reference, path)
        assert command.help in section, path
        for alias in command.aliases:
            assert f"`{' '.join((*path[:-1], alias))}`" in section, (path, alias)
        for option in command.options:
            assert f"`{option.shown}`".replace("|", "\\|") in section, (path, option.spellings)
            assert option.help in section, (path, option.spellings)
            if option.default is not None:
                assert f"| `{option.default}` |" in section, (path, option.spellings)
        for argument in command.arguments:
            assert f"`{argument.metavar}".replace("|", "\\|") in section, (path, argument.dest)
            assert argument.help in section, (path, argument.dest)
            for value, about in argument.suggest:
                assert f"`{value}`: {about}" in section, (path, value)
        for line, about in command.examples:
            assert re.search(rf"^{re.escape(line)} +# {re.escape(about)}$", section, flags=re.M), (path, line)
        for sub in command.commands:
            assert f"(#{'-'.join((*path, sub.name))})" in section, (path, sub.name)


def test_a_new_row_in_the_table_appears_in_the_rendered_reference() -> None:
    row = Command(
        "frobnicate",
        "Frobnicate a workspace's widgets.",
        "rigcli.cli.commands.frob:frobnicate",
        arguments=(Argument("name", "NAME", "Workspace name.", required=True),),
        options=(
            Option(("--hard",), "hard", "Frobnicate harder."),
            Option(("--level", "-l"), "level", "How hard.", metavar="N", kind="int", default=3),
            Option(("--mode",), "mode", "Which way round.", choices=("cw", "ccw"), default="cw"),
        ),
        aliases=("frob",),
        examples=(("rig frobnicate dev --hard", "the widgets of dev, harder"),),
    )
    group = Command(
        "widgets", "Look after widgets.", commands=(Command("count", "Count the widgets.", "rigcli.x:count"),)
    )
    table = TABLE.replace(commands=(*TABLE.commands, row, group))
    text = render_commands_markdown(table)
    assert "frobnicate" not in render_commands_markdown(TABLE)
    assert "| [`rig frobnicate`](#rig-frobnicate) | Frobnicate a workspace's widgets (alias: frob). |" in text
    section = _section(text, ("rig", "frobnicate"))
    assert "rig frobnicate [--hard] [--level N] [--mode cw|ccw] NAME\n" in section
    assert "Also spelled `rig frob`" in section
    assert "| `NAME` | Workspace name. Required. |" in section
    assert "| `--hard` |  | Frobnicate harder. |" in section
    assert "| `-l, --level N` | `3` | How hard. A whole number. |" in section
    assert "| `--mode cw\\|ccw` | `cw` | Which way round. |" in section
    assert "rig frobnicate dev --hard   # the widgets of dev, harder" in section
    assert "### `rig widgets count`\n\nCount the widgets." in text
    assert "[`rig widgets count`](#rig-widgets-count)" in _section(text, ("rig", "widgets"))
