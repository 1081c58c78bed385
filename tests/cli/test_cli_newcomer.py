"""What a newcomer tripped over: help that lists operations, and a fork that does not read as a second apply."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.cli.cli_support import RIG, env_with_rig, run_rig
from tests.cli.conftest import Rig


def test_op_workspace_help_lists_that_workspaces_operations(forked: Rig) -> None:
    result = forked("op", "dev", "--help")
    assert result.returncode == 0, result
    assert "rig op dev OPERATION" in result.stdout
    for line in ("rig op dev test", "run the tests", "rig op dev greet", "rig op dev remove"):
        assert line in result.stdout, result
    assert forked("op", "dev", "-h").stdout == result.stdout
    assert forked("run", "dev", "--help").stdout == result.stdout  # the alias too


def test_op_help_lists_the_projects_operations(forked: Rig) -> None:
    result = forked("op", "--help")
    assert result.returncode == 0, result
    assert "rig op WORKSPACE OPERATION [INPUTS]" in result.stdout  # the usage comes first
    assert "rig op status" in result.stdout and "show the prepared context" in result.stdout
    assert "rig op WORKSPACE test" in result.stdout
    assert "Workspaces: dev, dev2" in result.stdout
    assert forked("help", "op").stdout == result.stdout


def test_op_help_without_a_project_still_shows_the_usage(tmp_path: Path) -> None:
    result = run_rig("op", "--help", cwd=tmp_path)
    assert result.returncode == 0, result
    assert "rig op WORKSPACE OPERATION [INPUTS]" in result.stdout
    assert "inside a rig project" in result.stdout
    assert result.stderr == ""


def test_an_operations_own_help_is_unchanged(forked: Rig) -> None:
    result = forked("op", "dev", "greet", "--help")
    assert result.returncode == 0, result
    assert "who to greet" in result.stdout


def test_fork_after_a_cached_apply_shows_one_line_for_the_apply(rig: Rig) -> None:
    assert rig("apply").returncode == 0
    result = rig("fork", "dev", env={"RIG_RENDER": "0"})
    assert result.returncode == 0, result
    assert result.stderr.splitlines()[0] == "✓ dev: 2 cached"
    assert "apply dev" not in result.stderr and "base  cached" not in result.stderr


def test_a_live_fork_after_a_cached_apply_shows_one_line_for_the_apply(rig: Rig, dev_project: Path) -> None:
    assert rig("apply").returncode == 0
    child = pexpect.spawn(
        RIG,
        ["fork", "dev"],
        cwd=str(dev_project),
        env=env_with_rig({"TERM": "xterm"}),
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=60,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    output = str(child.before)
    assert "dev: 2 cached" in output
    assert "base  cached" not in output and "ran 0" not in output
