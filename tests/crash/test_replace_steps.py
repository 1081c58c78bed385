"""`rig fork NAME --replace` SIGKILLed between every two entries it commits to the state: each time,
exactly one usable workspace NAME is left, and after `rig gc` nothing rig made is left beyond
that workspace's machine and what the cache refers to.

The kill lands at exact instants: ``RIG_TEST_PAUSE_AFTER_WRITES=N`` (state/database.py, test-only)
makes rig stop for good right after its N-th committed write and say so in a file; the test then
kills its process group. N runs from 1 until a replace finishes without pausing.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.cli.cli_support import Result, env_with_rig, rig_executable, run_rig, write_project
from tests.helpers import wait_for

CONFIG = """
from rigcli import define_provider, workflow

app = workflow("steps", providers={"box": define_provider("local")})


def build(step, box):
    machine = box.create_machine()
    machine.exec("mkdir -p tree && echo built > tree/version", name="files")
    ref = machine.snapshot_ref()
    machine.delete()
    return {"ctx": {"base": ref}}


def create(workflow, workspace, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "snapshot": machine.snapshot_ref()}  # a machine and a snapshot


def remove(workspace, box):
    box.delete_snapshot(workspace.ctx["snapshot"])
    box.delete_machine(workspace.ctx["machine"])


def read(workspace, box):
    return box.from_id(workspace.ctx["machine"]).read_text("tree/version").strip()


workflows = (
    app.sequence("steps")
    .task("build", build)
    .workspace(create=create, remove=remove)
    .workspace_operation("read", run=read)
)
"""

MOST_STEPS = 60  # a replace commits far fewer entries than this; more means the pause never fired


def rig(project: Path, *args: str) -> Result:
    return run_rig(*args, cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)


def ok(project: Path, *args: str) -> Result:
    result = rig(project, *args)
    assert result.returncode == 0, result
    return result


def workspaces(project: Path) -> list[dict[str, Any]]:
    document = ok(project, "--json", "ls").json
    return [item for workflow in document["workflows"] for item in workflow["workspaces"]]


def names(project: Path, kind: str) -> set[str]:
    return {path.name for path in (project / ".rig" / kind).iterdir()}


def replace_killed_after(project: Path, writes: int, marker: Path) -> bool:
    """Run ``rig fork a --replace``, killed right after its ``writes``-th commit; False if it finished first."""
    marker.unlink(missing_ok=True)
    env = env_with_rig(
        {"RIG_RENDER": "0", "RIG_TEST_PAUSE_AFTER_WRITES": str(writes), "RIG_TEST_PAUSE_FILE": str(marker)}
    )
    process = subprocess.Popen(
        [rig_executable(), "fork", "a", "--replace"],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for(lambda: marker.exists() or process.poll() is not None, timeout=120, what="the pause or the end")
        if not marker.exists():
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == 0, stderr
            return False
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        return True
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)


def test_replace_killed_between_any_two_journal_entries_leaves_one_usable_workspace(tmp_path: Path) -> None:
    project = write_project(tmp_path / "steps", CONFIG)
    ok(project, "fork", "a")
    marker = tmp_path / "paused"
    steps = 0
    for writes in range(1, MOST_STEPS + 1):
        if not replace_killed_after(project, writes, marker):
            break
        steps += 1
        found = workspaces(project)
        assert [(item["name"], item["status"]) for item in found] == [("a", "ready")], (writes, found)
        machine = found[0]["ctx"]["machine"]
        assert ok(project, "--json", "op", "a", "read").json == "built", writes  # usable
        ok(project, "gc")
        # gc found everything else: the machine and snapshot of a, and the build's snapshot, are all there is.
        snapshot = found[0]["ctx"]["snapshot"]["snapshot_id"]
        base = found[0]["workflow_ctx"]["base"]["snapshot_id"]
        assert names(project, "machines") == {machine}, writes
        assert names(project, "snapshots") == {snapshot, base}, writes
    else:
        raise AssertionError(f"rig fork --replace never finished within {MOST_STEPS} commits")
    assert steps >= 5, steps  # the kill really landed between the replace's own steps
    # Finished uncut, the replace leaves the same: one workspace, nothing for gc.
    assert [item["name"] for item in workspaces(project)] == ["a"]
    assert ok(project, "--json", "gc", "--dry-run").json["removed"] == []
