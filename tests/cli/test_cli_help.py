"""Help from the command table, through the installed rig: `rig help --json`, --help text, and what they cost."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rigcli._version import __version__
from rigcli.cli.table import TABLE
from tests.cli.cli_support import env_with_rig, run_rig

VISIBLE = [command for command in TABLE.commands if not command.hidden]


def _listed(help_text: str) -> list[str]:
    """The command names of a --help text's "Commands:" section."""
    section = help_text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  (\S+)", section, flags=re.MULTILINE)


def test_help_json_lists_every_command_the_help_shows(tmp_path: Path) -> None:
    result = run_rig("help", "--json", cwd=tmp_path, subprocess=True)
    assert result.returncode == 0 and result.stderr == "", result
    document = result.json
    assert list(document) == ["name", "version", "commands"]
    assert document["name"] == "rig" and document["version"] == __version__
    for entry in document["commands"]:
        assert list(entry) == ["name", "description"]
        assert isinstance(entry["description"], str) and entry["description"].strip(), entry
    names = [entry["name"] for entry in document["commands"]]
    assert names == [command.name for command in VISIBLE]
    assert names == _listed(run_rig("--help", cwd=tmp_path, subprocess=True).stdout)
    for command in ("init", "plan", "apply", "fork", "op", "rm", "ls", "cache", "gc", "state", "doctor", "help"):
        assert command in names
    assert "create" not in names and "run" not in names  # aliases are named in their command's description
    fork = next(entry for entry in document["commands"] if entry["name"] == "fork")
    assert fork["description"] == "Create a workspace from the prepared workflow (alias: create)."


@pytest.mark.parametrize("args", [["--json", "help"], ["help", "--json"], ["help", "-C", ".", "--json"]])
def test_json_is_a_global_option_for_help_too(tmp_path: Path, args: list[str]) -> None:
    result = run_rig(*args, cwd=tmp_path)
    assert result.returncode == 0, result
    assert [entry["name"] for entry in result.json["commands"]] == [command.name for command in VISIBLE]


def test_help_json_of_a_group_and_of_an_alias(tmp_path: Path) -> None:
    cache = run_rig("help", "cache", "--json", cwd=tmp_path)
    assert cache.json["name"] == "rig cache"
    assert [entry["name"] for entry in cache.json["commands"]] == ["ls", "explain", "invalidate", "clear"]
    assert all(entry["description"] for entry in cache.json["commands"])
    create = run_rig("help", "create", "--json", cwd=tmp_path)
    assert create.json["name"] == "rig fork" and create.json["commands"] == []
    unknown = run_rig("help", "frobnicate", "--json", cwd=tmp_path)
    assert (unknown.returncode, unknown.stdout, unknown.stderr) == (2, "", "error: No such command 'frobnicate'.\n")


def test_help_text_of_an_alias_is_its_command_s(tmp_path: Path) -> None:
    alias = run_rig("help", "create", cwd=tmp_path)
    assert alias.returncode == 0
    assert alias.stdout == run_rig("fork", "--help", cwd=tmp_path).stdout
    assert alias.stdout.startswith("Usage: rig fork [OPTIONS] [NAME]\n")


def test_descriptions_wrap_and_are_never_cut(tmp_path: Path) -> None:
    result = run_rig("--help", cwd=tmp_path, env={"COLUMNS": "60"})
    flowing = " ".join(result.stdout.split())
    for command in VISIBLE:
        assert f"{command.name} {command.summary}" in flowing, command.name
    assert "..." not in result.stdout.split("Commands:", 1)[1]  # click's cut mark
    assert max(len(line) for line in result.stdout.splitlines()) <= 60


def test_command_help_ends_with_the_global_options(tmp_path: Path) -> None:
    result = run_rig("rm", "--help", cwd=tmp_path)
    assert result.stdout.startswith("Usage: rig rm [OPTIONS] [NAME...]\n")
    globals_section = result.stdout.split("Global options (accepted anywhere on the line):\n", 1)[1]
    for option in TABLE.options:
        if not option.eager:
            assert f"  {option.shown}  " in globals_section, option.shown
    assert "<str>" not in result.stdout


def test_op_help_outside_a_project_is_the_usage_from_the_table(tmp_path: Path) -> None:
    result = run_rig("op", "--help", cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.stdout.startswith(
        "Usage: rig op TARGET [INPUTS]\n\nRun a workspace or workflow operation (alias: run).\n\n"
        "  rig op WORKSPACE OPERATION [INPUTS]   a workspace operation\n"
    )
    assert "  rig op WORKSPACE OPERATION --help     the operation's inputs\n" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["help", "--json"],
        ["__complete", "--shell", "zsh", "--index", "2", "--", "rig", "cache", ""],
        ["__complete", "--shell", "zsh", "--index", "2", "--", "rig", "rm", "--"],
    ],
)
def test_help_json_and_completion_import_no_typer(tmp_path: Path, args: list[str]) -> None:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rigcli", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env_with_rig(),
    )
    assert completed.returncode == 0 and completed.stdout, completed.stderr
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()}
    for heavy in ("typer", "click", "rich", "pydantic"):
        assert heavy not in imported
    if args[0] == "help":
        assert json.loads(completed.stdout)["name"] == "rig"
