"""Commands in a workspace pass their exit code through: the starter's workspace runs `rig exec` and
`rig shell` as rig's built-ins (it defines no operation of those names), and an operation whose result is
``{"exit_code": N}`` makes N rig's exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import run_rig, write_project


def test_the_starter_leaves_exec_and_shell_to_rig(started: Path) -> None:
    listed = run_rig("--json", "ls", "config", cwd=started, subprocess=True)
    operations = listed.json["workflows"][0]["workspace_operations"]
    assert "exec" not in operations and "shell" not in operations, operations


@pytest.mark.parametrize(("command", "code"), [("true", 0), ("exit 7", 7), ("kill -TERM $$", 143)])
def test_exec_in_the_starters_workspace_exits_with_the_commands_code(started: Path, command: str, code: int) -> None:
    done = run_rig("exec", "demo", "--", "sh", "-c", command, cwd=started, subprocess=True)
    assert (done.returncode, done.stdout, done.stderr) == (code, "", ""), done


def test_exec_in_the_starters_workspace_is_the_programs_own_stdio(started: Path) -> None:
    """Its stdin reaches the program, its stdout is the program's, its stderr the program's: no rig lines."""
    done = run_rig(
        "exec",
        "demo",
        "--",
        "sh",
        "-c",
        "cat; echo to-err >&2; exit 3",
        cwd=started,
        input="from-stdin\n",
        subprocess=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "from-stdin\n", "to-err\n"), done


def test_the_starters_shell_is_rigs_and_exits_with_the_shells_code(started: Path, tmp_path: Path) -> None:
    """bash on a terminal of its own: job control works (no warning) and its exit code is rig's."""
    import pexpect

    from tests.cli.cli_support import RIG, env_with_rig

    env = env_with_rig({"SHELL": "/bin/bash", "HOME": str(tmp_path), "PS1": "starter$ "})
    child = pexpect.spawn(RIG, ["shell", "demo"], cwd=str(started), env=env, timeout=60)
    try:
        child.expect(r"[$#] ")
        before_the_prompt = child.before
        child.sendline("exit 7")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 7
    assert b"job control" not in before_the_prompt, before_the_prompt


RUN_CONFIG = """
from pydantic import BaseModel

from rigcli import Arg, define_provider, workflow

app = workflow("dev", providers={"box": define_provider("local")})


def prepare(step, box):
    machine = box.create_machine()
    try:
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


class Command(BaseModel):
    command: str = Arg(position=0)


def run_command(workspace, box, input):
    return {"exit_code": box.from_id(workspace.ctx["machine"]).exec(input.command, check=False).exit_code}


workflows = (
    app.sequence("dev")
    .task("prepare", prepare)
    .workspace(create=create, remove=remove)
    .workspace_operation("sh", run=run_command, input=Command)
)
"""


@pytest.fixture
def with_operation(tmp_path: Path) -> Path:
    project = write_project(tmp_path / "op", RUN_CONFIG)
    for argv in (["apply"], ["fork", "demo"]):
        done = run_rig(*argv, cwd=project)
        assert done.returncode == 0, done
    return project


@pytest.mark.parametrize(("command", "code"), [("true", 0), ("exit 3", 3), ("kill -TERM $$", 143)])
def test_an_operations_exit_code_result_is_rigs_exit_code(with_operation: Path, command: str, code: int) -> None:
    done = run_rig("op", "demo", "sh", command, cwd=with_operation, subprocess=True)
    assert done.returncode == code, done
    assert "error:" not in done.stderr  # a command's own exit code is no failure of rig's


def test_the_result_is_still_shown_in_text_and_json(with_operation: Path) -> None:
    text = run_rig("op", "demo", "sh", "exit 4", cwd=with_operation, subprocess=True)
    assert (text.returncode, text.stdout) == (4, '{\n  "exit_code": 4\n}\n')
    shown = run_rig("--json", "op", "demo", "sh", "exit 4", cwd=with_operation, subprocess=True)
    assert (shown.returncode, shown.json) == (4, {"exit_code": 4})
