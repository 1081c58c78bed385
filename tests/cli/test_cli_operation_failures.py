"""An operation whose handler raises is a failure the user can act on (exit 1, one line), never exit 3."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import run_rig, write_project

CONFIG = """
from rigcli import sequence


def create(workflow, workspace):
    return {"ready": True}


def broken(workflow):
    raise RuntimeError("the report service is down")


def broken_on_workspace(workspace):
    raise ValueError(f"cannot reach {workspace.name}")


workflows = (
    sequence("ops")
    .task("prepare", lambda step: None)
    .workspace(create=create)
    .operation("report", run=broken)
    .workspace_operation("ping", run=broken_on_workspace)
)
"""


def test_a_failing_workflow_operation_exits_1_with_one_line(tmp_path: Path) -> None:
    project = write_project(tmp_path / "ops", CONFIG)
    result = run_rig("op", "report", cwd=project)
    assert result.returncode == 1, result
    assert result.stderr == "error: Operation report failed: RuntimeError: the report service is down\n"


def test_a_failing_workspace_operation_exits_1_with_one_line(tmp_path: Path) -> None:
    project = write_project(tmp_path / "ops", CONFIG)
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    result = run_rig("op", "dev", "ping", cwd=project)
    assert result.returncode == 1, result
    assert result.error_lines == ["error: Workspace operation ping on dev failed: ValueError: cannot reach dev"]
