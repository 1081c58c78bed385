"""Programs attached to the user's terminal, seen on a real screen (tmux): what they print stays."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig
from tests.helpers import wait_for, with_terminal_shell

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ERASE_LINE, HIDE_CURSOR = b"\x1b[2K", b"\x1b[?25l"  # what Rich's live display writes

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Screen:
    """A tmux pane running ``sh`` in ``cwd``, typed into and read back like a user's terminal."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.tmux = ["tmux", "-L", f"rig-test-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-x", "120", "-y", "40", "-c", str(cwd), "env", "TERM=xterm", "sh"],
            env=env,
            check=True,
        )

    def type(self, line: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "0", line, "Enter"], check=True)

    def text(self) -> str:
        return subprocess.run([*self.tmux, "capture-pane", "-p", "-t", "0"], capture_output=True, text=True).stdout

    def record(self, into: Path) -> None:
        """Copy every byte the pane is sent from now on into ``into`` (cursor moves and erasures too)."""
        subprocess.run([*self.tmux, "pipe-pane", "-t", "0", f"cat >> {shlex.quote(str(into))}"], check=True)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[tuple[Screen, Path]]:
    project = tmp_path / "quickstart"
    shutil.copytree(EXAMPLES / "quickstart", project)
    with_terminal_shell(project)
    env = env_with_rig({"TERM": "xterm", "PS1": "outer$ ", "SHELL": "/bin/sh", "RIG_HOME": str(tmp_path / "home")})
    # The live view is what used to erase the shell's last lines: nothing may turn it off (the
    # suite sets NO_COLOR for every test, and the live view only runs without it).
    for variable in ("RIG_RENDER", "NO_COLOR"):
        env.pop(variable, None)
    for argv in (["apply"], ["fork", "dev"]):
        subprocess.run([RIG, *argv], cwd=project, env=env, check=True, capture_output=True, timeout=120)
    shown = Screen(project, env)
    try:
        yield shown, project
    finally:
        shown.close()


@needs_tmux
def test_the_terminal_providers_shell_keeps_its_last_lines_on_screen(
    screen: tuple[Screen, Path], tmp_path: Path
) -> None:
    pane, _ = screen
    raw = tmp_path / "pane.raw"
    pane.record(raw)
    pane.type("rig op dev terminal")
    wait_for(lambda: "outer$" in pane.text().partition("waiting on Shell in dev")[2], "the shell's prompt")
    pane.type("PS1='inner$ '; echo one-MARK; echo two-MARK")
    wait_for(lambda: "inner$ " in pane.text(), "the inner prompt")
    pane.type("exit")
    wait_for(lambda: "✓ terminal on dev" in pane.text() and pane.text().rstrip().endswith("outer$"), "rig to finish")
    lines = [line.rstrip() for line in pane.text().splitlines() if line.strip()]
    # Only the live view can erase what the shell printed: it must have run (it hides the cursor
    # while it draws, which the plain renderer never does), or this test proves nothing.
    wait_for(lambda: {ERASE_LINE, HIDE_CURSOR} <= _sequences(raw), "rig's live view (it drew none)")
    # The shell's final prompt and what was typed at it were erased by the live view's first redraw.
    assert "inner$ exit" in lines, lines
    last = lines.index("inner$ exit")
    assert any(line.endswith("one-MARK") for line in lines[:last]) and lines[last + 1] == "  ✓ Shell in dev completed"


def _sequences(raw: Path) -> set[bytes]:
    """Which of the live view's control sequences the pane has been sent so far."""
    sent = raw.read_bytes() if raw.exists() else b""
    return {sequence for sequence in (ERASE_LINE, HIDE_CURSOR) if sequence in sent}


def test_completion_knows_shell_exec_stop_and_start_and_offers_workspace_names(forked_project: Path) -> None:
    from tests.cli.test_cli_completion import bash_complete

    assert {"shell", "exec", "stop", "start"} <= set(bash_complete(forked_project, ["rig", ""]))
    for command in ("shell", "exec", "stop", "start"):
        assert bash_complete(forked_project, ["rig", command, ""]) == ["dev", "dev2"], command


@pytest.fixture
def forked_project(tmp_path: Path) -> Path:
    from tests.cli.cli_support import DEV_CONFIG, run_rig, write_project

    project = write_project(tmp_path / "dev-project", DEV_CONFIG)
    for name in ("dev", "dev2"):
        assert run_rig("fork", name, cwd=project).returncode == 0
    return project
