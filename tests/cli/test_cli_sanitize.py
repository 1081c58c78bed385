"""Untrusted output (a task's commands and prints) never drives the user's terminal."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project

HOSTILE = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[1;1H"  # retitle the window, clear the screen, move the cursor

CONFIG = f"""
from rigcli import define_provider, workflow

app = workflow("noisy", providers={{"box": define_provider("local")}})


def noisy(step, box):
    print("printed {HOSTILE}\\x1b[31mred\\x1b[0m")
    box.create_machine().exec("printf 'from a command {HOSTILE}\\\\033[32mgreen\\\\033[0m\\\\n'", name="noise")


workflows = app.sequence("noisy").task("noisy", noisy, cache_ttl=0)
"""


@pytest.fixture
def noisy(tmp_path: Path) -> Path:
    return write_project(tmp_path / "noisy", CONFIG)


def test_off_a_terminal_no_control_sequence_and_no_colour_gets_through(noisy: Path) -> None:
    result = run_rig("apply", cwd=noisy, subprocess=True)
    assert result.returncode == 0, result
    assert "printed red" in result.stderr and "from a command green" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


@pytest.mark.parametrize("no_color", ["1", ""])
def test_in_a_terminal_only_colour_survives_and_only_without_no_color(noisy: Path, no_color: str) -> None:
    env = env_with_rig({"NO_COLOR": no_color, "TERM": "xterm-256color"})
    if not no_color:
        env.pop("NO_COLOR")
    child = pexpect.spawn(RIG, ["apply"], cwd=str(noisy), env=env, encoding="utf-8", timeout=60, dimensions=(40, 200))
    child.expect(pexpect.EOF)
    child.close()
    output = child.before or ""
    assert child.exitstatus == 0, output
    assert "\x1b]0;" not in output and "owned" not in output.replace("printed", "")
    assert "\x1b[2J" not in output and "\x07" not in output
    assert "printed" in output and "from a command" in output
    coloured = "\x1b[31m" in output or "\x1b[32m" in output  # Rich may re-emit the colour in its own form
    if no_color:
        assert "\x1b[" not in output
    else:
        assert coloured or "\x1b[" in output
