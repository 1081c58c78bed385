"""The terminal provider in a real pseudo-terminal, and without one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

DRIVER = Path(__file__).with_name("terminal_driver.py")


def run_in_pty(project: Path, *args: str) -> tuple[str, int]:
    child = pexpect.spawn(
        sys.executable,
        [str(DRIVER), str(project), *args],
        encoding="utf-8",
        timeout=60,
        dimensions=(24, 120),
    )
    child.expect(pexpect.EOF)
    child.close()
    return child.before.replace("\r\n", "\n"), child.exitstatus


def events_of(output: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in output.splitlines() if line.startswith("EVENT ")]


def test_a_command_that_exits_zero_completes(project: Path) -> None:
    output, status = run_in_pty(project, "Say hi", "printf 'hello from %s\\n' \"$(tty)\"; exit 0")
    assert status == 0, output
    assert "hello from /dev/pts/" in output  # it really had the terminal
    assert 'RESULT {"finished": true, "exit_code": 0}' in output
    awaiting, completed = events_of(output)
    assert awaiting["type"] == "interaction.awaiting_user" and completed["type"] == "interaction.completed"
    assert awaiting["title"] == completed["title"] == "Say hi"
    assert awaiting["interaction_id"] == completed["interaction_id"]
    assert awaiting["instructions"] == "Say hello"


def test_the_user_can_type_into_the_command(project: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        [str(DRIVER), str(project), "Name", "printf 'name? '; read name; echo \"hi $name\""],
        encoding="utf-8",
        timeout=60,
    )
    child.expect_exact("name? ")
    child.sendline("Ada")
    child.expect_exact("hi Ada")
    child.expect_exact("RESULT")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_failing_command_reports_its_exit_code(project: Path) -> None:
    output, status = run_in_pty(project, "Say hi", "printf hello; exit 3")
    assert status == 1
    assert 'ERROR Interactive command "Say hi" exited 3' in output
    assert [event["type"] for event in events_of(output)] == ["interaction.awaiting_user", "interaction.completed"]


def test_without_a_terminal_it_fails_at_once(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(project), "Say hi", "printf hello; exit 0"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert (
        'ERROR Interactive command "Say hi" needs a terminal, and no interactive terminal is available' in done.stdout
    )
    assert "hello" not in done.stdout
    assert events_of(done.stdout) == []


def test_it_runs_in_a_local_machine_directory(local: Any, project: Path) -> None:
    machine = local.runtime.create_machine()
    output, status = run_in_pty(project, "Where", "pwd; echo $RIG_MACHINE_ID", "local", machine.id)
    assert status == 0, output
    assert f"{machine.path}\n{machine.id}\n" in output


def test_it_runs_inside_a_docker_machine(docker: Any, project: Path) -> None:
    if not _docker_cli():
        pytest.skip("the docker CLI is not on PATH")
    machine = docker.runtime.create_machine()
    machine.write_text("inside.txt", "in the container\n")
    output, status = run_in_pty(project, "Inside", "cat inside.txt; hostname", "docker", machine.id)
    assert status == 0, output
    assert "in the container" in output
    assert machine.container_id[:12] in output


def _docker_cli() -> bool:
    import shutil

    return shutil.which("docker") is not None
