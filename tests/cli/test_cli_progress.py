"""--progress: what the live view leaves in a terminal's scrollback, and plain lines prefixed by their task."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project

SCROLL_CONFIG = """
import os

from rigcli import define_provider, workflow

app = workflow("scroll", providers={"box": define_provider("local")})


def chatty(step, box):
    machine = box.create_machine()
    machine.exec("for i in $(seq 1 30); do echo chatty-line-$i; done", name="count")
    machine.exec("echo second-command-out")
    machine.delete()
    return {"ctx": {"chatty": 1}}


def brittle(step, box):
    machine = box.create_machine()
    fail = "exit 3" if os.environ.get("RIG_TEST_FAIL") else "true"
    machine.exec(f"for i in $(seq 1 30); do echo brittle-line-$i; done; {fail}", name="brittle")
    machine.delete()


workflows = app.sequence("scroll").task("chatty", chatty).task("brittle", brittle)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "scroll", SCROLL_CONFIG)


def _scrollback(project: Path, command: str, done: Path) -> list[str]:
    """Run ``command`` in a tmux terminal (120x20) and return every line of the pane, history included."""
    socket = f"rig-test-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = env_with_rig({"TERM": "xterm-256color"})
    env.pop("NO_COLOR", None)
    env.pop("RIG_RENDER", None)
    script = f"{command}; echo rc=$? > {shlex.quote(str(done))}"
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", "120", "-y", "20", "-c", str(project), "sh", "-c", f"{script}; sleep 60"],
        env=env,
        check=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not finish in the terminal"
            time.sleep(0.1)
        time.sleep(0.2)
        captured = subprocess.run(
            [*tmux, "capture-pane", "-p", "-S", "-", "-t", "0"], capture_output=True, text=True, check=True
        )
        return [line.rstrip() for line in captured.stdout.splitlines()]
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_scrollback_keeps_each_tasks_commands_and_last_lines_after_a_successful_apply(
    project: Path, tmp_path: Path
) -> None:
    lines = _scrollback(project, f"{shlex.quote(RIG)} apply", tmp_path / "done")
    assert (tmp_path / "done").read_text().strip() == "rc=0"
    text = "\n".join(lines)
    assert "ran 2, cached 0" in text
    # Each command line stays, and the last 5 output lines of the task, not the rest.
    assert any(line.strip().startswith("$ for i in $(seq 1 30); do echo chatty-line-$i") for line in lines), text
    assert any(line.strip() == "$ echo second-command-out" for line in lines), text
    # chatty's last 5 lines: the end of its first command, then its second command and its line.
    kept = [line.strip() for line in lines if line.strip().startswith("chatty-line-")]
    assert kept == [f"chatty-line-{i}" for i in range(28, 31)], text
    assert any(line.strip() == "second-command-out" for line in lines), text
    assert any(line.strip() == "… 27 lines" for line in lines), text  # what was left out, counted
    brittle = [line.strip() for line in lines if line.strip().startswith("brittle-line-")]
    assert brittle == [f"brittle-line-{i}" for i in range(26, 31)], text
    assert any("rig logs brittle shows all" in line for line in lines), text
    assert any("rig logs chatty shows all" in line for line in lines), text


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_scrollback_keeps_every_line_of_a_failed_task(project: Path, tmp_path: Path) -> None:
    lines = _scrollback(project, f"RIG_TEST_FAIL=1 {shlex.quote(RIG)} apply", tmp_path / "done")
    assert (tmp_path / "done").read_text().strip() == "rc=1"
    brittle = [line.strip() for line in lines if line.strip().startswith("brittle-line-")]
    assert brittle[-30:] == [f"brittle-line-{i}" for i in range(1, 31)], "\n".join(lines)
    assert any("brittle exited 3" in line for line in lines)


def test_progress_plain_prefixes_every_line_with_its_task_even_on_a_terminal_setting(project: Path) -> None:
    result = run_rig("--progress", "plain", "apply", cwd=project, env={"TERM": "xterm-256color"})
    assert result.returncode == 0, result
    lines = result.stderr.splitlines()
    printed = [line for line in lines if line.startswith("    chatty | chatty-line-")]
    assert printed == [f"    chatty | chatty-line-{i}" for i in range(1, 31)]
    assert "    chatty | $ echo second-command-out" in lines
    assert "\x1b[" not in result.stderr


def test_progress_tty_draws_the_live_view_even_into_a_pipe(project: Path) -> None:
    result = run_rig("--progress", "tty", "apply", cwd=project, subprocess=True, env={"TERM": "xterm-256color"})
    assert result.returncode == 0, result
    assert "\x1b[" in result.stderr  # drawn as on a terminal
    assert "rig logs chatty shows all" in result.stderr


def test_progress_rejects_an_unknown_mode(project: Path) -> None:
    result = run_rig("--progress", "fancy", "apply", cwd=project)
    assert result.returncode == 2
    assert "fancy" in result.stderr
