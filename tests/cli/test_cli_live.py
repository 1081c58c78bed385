"""The live view in a real pseudo-terminal, and the plain output of the same run off a terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest

from tests.cli.cli_support import EVENTS_CONFIG, RIG, env_with_rig, run_rig, write_project

LIVE_CONFIG = """
import time

from rigcli import define_provider, workflow

app = workflow("live", providers={"box": define_provider("local")})


def first(step, box):
    machine = box.create_machine()
    machine.exec("for i in 1 2 3; do echo line $i; sleep 0.2; done", name="count")
    return {"ctx": {"base": machine.snapshot_ref()}}


def second(step):
    for i in range(3):
        print(f"second {i}", flush=True)
        time.sleep(0.2)


def ask(step, local):
    return {"ctx": {"name": local.prompt("Your name")}}


def create(workflow, workspace, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


workflows = (
    app.sequence("live").task("first", first).task("second", second)
    .workspace(create=create)
    .workspace_operation("hello", run=lambda workspace: print("hi from", workspace.name), description="say hi")
)
"""

ASK_CONFIG = """
from rigcli import workflow


def ask(step, local):
    return {"ctx": {"name": local.prompt("Your name")}}


workflows = workflow("ask").sequence("ask").task("warm", lambda step: print("warming")).task("ask", ask)
"""

ANSI = re.compile(r"\x1b\[")


def terminal_env(**extra: str) -> dict[str, str]:
    env = env_with_rig({"TERM": "xterm-256color"})
    env.pop("NO_COLOR", None)
    env.pop("RIG_RENDER", None)
    env.update(extra)
    return env


def spawn(project: Path, *args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    return pexpect.spawn(
        RIG, list(args), cwd=str(project), env=env or terminal_env(), encoding="utf-8", dimensions=(40, 120), timeout=60
    )


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


@pytest.fixture
def live_project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "live", LIVE_CONFIG)


def test_live_view_renders_statuses_and_finishes_cleanly(live_project: Path) -> None:
    output = finish(spawn(live_project, "apply"))
    assert ANSI.search(output), "a terminal run should draw the live view"
    assert "apply live" in output
    assert re.search(r"\d/2", output)  # done/total in the header
    assert "line 3" in output  # the running node's output tail
    assert "✓ first" in output and "✓ second" in output
    assert "ran 2, cached 0" in output
    assert "machine.created" in output  # provider events
    assert output.rindex("\x1b[?25h") > output.rindex("\x1b[?25l")  # the hidden cursor comes back
    assert output.index("ran 2, cached 0") < output.rindex("\x1b[2K")  # and the live frame is erased


def test_plain_output_of_the_same_run_has_no_escape_codes(live_project: Path) -> None:
    result = run_rig("apply", cwd=live_project, env={"TERM": "xterm-256color"})
    assert result.returncode == 0, result
    assert not ANSI.search(result.stderr) and not ANSI.search(result.stdout)
    lines = result.stderr.splitlines()
    assert lines[0] == "● apply live"
    assert "    first | line 1" in lines and "    second | second 2" in lines
    assert any(re.fullmatch(r"  ✓ first  \d+\.\ds", line) for line in lines)
    assert re.fullmatch(r"✓ live: ran 2, cached 0 in \d+\.\ds", lines[-1])


def test_no_color_in_a_terminal_means_no_escape_codes(live_project: Path) -> None:
    output = finish(spawn(live_project, "apply", env=terminal_env(NO_COLOR="1")))
    assert not ANSI.search(output)
    assert "✓ second" in output


def test_rig_render_0_gives_append_only_lines(live_project: Path) -> None:
    output = finish(spawn(live_project, "apply", env=terminal_env(RIG_RENDER="0")))
    assert "\x1b[1A" not in output and "\x1b[2K" not in output  # nothing is redrawn
    assert "✓ first" in output


def test_prompt_pauses_the_live_view(tmp_path: Path) -> None:
    project = write_project(tmp_path / "ask", ASK_CONFIG)
    child = spawn(project, "apply")
    child.expect("Your name")
    child.sendline("Ada")
    output = finish(child)
    assert "✓ ask" in output
    plan = run_rig("plan", "--json", cwd=project).json
    assert plan["final_context"] == {"name": "Ada"}


def test_fork_on_a_terminal_shows_next_steps(live_project: Path) -> None:
    output = finish(spawn(live_project, "fork", "demo"))
    assert "demo ready" in output
    assert "Next" in output
    assert "rig op demo hello" in output and "say hi" in output
    assert "rig shell demo" in output and "rig exec demo -- CMD" in output  # rig's own, for every workspace
    assert "rig rm demo" in output


def test_fork_with_stdout_captured_prints_the_name(live_project: Path, tmp_path: Path) -> None:
    # stderr is a terminal (live view), stdout is not: `name=$(rig fork ...)` gets just the name.
    captured = tmp_path / "stdout.txt"
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", f'"{RIG}" fork feature > "{captured}"'],
        cwd=str(live_project),
        env=terminal_env(),
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=60,
    )
    output = finish(child)
    assert captured.read_text() == "feature\n"
    assert "feature ready" in output
    assert "Next" in output


def test_live_view_shows_a_pending_interaction(tmp_path: Path) -> None:
    project = write_project(tmp_path / "events", EVENTS_CONFIG)
    child = spawn(project, "apply")
    child.expect("waiting on Example login")
    child.expect("https://example.invalid/login")
    child.expect("Example login completed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # the workflow's last task fails on purpose
    assert "the disk is full" in str(child.before)


PARALLEL_CONFIG = """
import time

from rigcli import sequence


def chatty(step):
    for i in range(300):
        print(f"{step.path} says {i}")
        if i % 50 == 0:
            time.sleep(0.05)


def branch(name):
    return sequence(name).task("talk", chatty)


workflows = sequence("fan").parallel(left=branch("left"), right=branch("right"), mid=branch("mid")).task(
    "join", lambda step: {"ctx": {"joined": sorted(step.ctx)}}
)
"""


def test_live_view_survives_parallel_branches_flooding_output(tmp_path: Path) -> None:
    project = write_project(tmp_path / "fan", PARALLEL_CONFIG)
    output = finish(spawn(project, "apply"))
    for path in ("left.talk", "right.talk", "mid.talk", "join"):
        assert f"✓ {path}" in output
    assert "ran 4, cached 0" in output
