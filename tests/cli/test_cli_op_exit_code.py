"""Operations that run a command pass its exit code through: a result ``{"exit_code": N}`` is rig's exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import run_rig


@pytest.fixture
def started(tmp_path: Path) -> Path:
    """``rig init``'s starter, applied, with a workspace ``demo``."""
    for argv in (["init"], ["apply"], ["fork", "demo"]):
        done = run_rig(*argv, cwd=tmp_path)
        assert done.returncode == 0, done
    return tmp_path


@pytest.mark.parametrize(("command", "code"), [("true", 0), ("exit 3", 3), ("kill -TERM $$", 143)])
def test_the_starters_exec_operation_exits_with_the_commands_code(started: Path, command: str, code: int) -> None:
    done = run_rig("op", "demo", "exec", command, cwd=started, subprocess=True)
    assert done.returncode == code, done
    assert "error:" not in done.stderr  # a command's own exit code is no failure of rig's


def test_the_result_is_still_shown_in_text_and_json(started: Path) -> None:
    text = run_rig("op", "demo", "exec", "exit 4", cwd=started, subprocess=True)
    assert (text.returncode, text.stdout) == (4, '{\n  "exit_code": 4\n}\n')
    shown = run_rig("--json", "op", "demo", "exec", "exit 4", cwd=started, subprocess=True)
    assert (shown.returncode, shown.json) == (4, {"exit_code": 4})


def test_the_starters_shell_operation_exits_with_the_shells_code(started: Path) -> None:
    import pexpect

    from tests.cli.cli_support import RIG, env_with_rig

    env = env_with_rig({"SHELL": "/bin/sh", "PS1": "starter$ "})
    child = pexpect.spawn(RIG, ["op", "demo", "shell"], cwd=str(started), env=env, timeout=60)
    try:
        child.expect_exact("starter$ ")
        child.sendline("exit 7")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 7
