"""Day two on the local provider, through the installed rig: outdated workspaces and `rig diff`,
`rig fork --replace`, `--from` and `--count`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import Result, run_rig, write_project

# A machine per workspace, copied from a snapshot the workflow builds; VERSION is what "build" puts in it.
CONFIG = """
import os
import time
from pathlib import Path

from rigcli import define_provider, workflow

app = workflow("drift", providers={"box": define_provider("local")})
VERSION = "1"


def build(step, box):
    machine = box.create_machine()
    machine.exec("mkdir -p tree && echo " + VERSION + " > tree/version", name="files")
    ref = machine.snapshot_ref()
    machine.delete()
    return {"ctx": {"base": ref}}


def finish(step):
    return {"ctx": dict(step.ctx)}


def create(workflow, workspace, box):
    gate = os.environ.get("DRIFT_GATE")  # --count: every create waits until all have started
    if gate:
        Path(gate, workspace.name).touch()
        deadline = time.monotonic() + 30
        while len(list(Path(gate).iterdir())) < int(os.environ["DRIFT_GATE_COUNT"]):
            assert time.monotonic() < deadline, "the create hooks did not run at once"
            time.sleep(0.02)
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "path": machine.path}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


def read(workspace, box):
    return box.from_id(workspace.ctx["machine"]).read_text("tree/version").strip()


workflows = (
    app.sequence("drift")
    .task("build", build)
    .task("finish", finish)
    .workspace(create=create, remove=remove)
    .workspace_operation("read", run=read)
)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "drift", CONFIG)


def rig(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=project, env={"RIG_RENDER": "0", **(env or {})}, subprocess=True)


def ok(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    result = rig(project, *args, env=env)
    assert result.returncode == 0, result
    return result


def listed(project: Path) -> dict[str, dict[str, Any]]:
    document = ok(project, "--json", "ls").json
    return {item["name"]: item for workflow in document["workflows"] for item in workflow["workspaces"]}


def set_version(project: Path, version: str) -> None:
    config = project / "rig_config.py"
    text = config.read_text()
    config.write_text(text.replace(f'VERSION = "{int(version) - 1}"', f'VERSION = "{version}"'))


def machine_dirs(project: Path) -> set[str]:
    return {path.name for path in (project / ".rig" / "machines").iterdir()}


def snapshot_dirs(project: Path) -> set[str]:
    return {path.name for path in (project / ".rig" / "snapshots").iterdir()}


def test_a_handler_change_makes_a_workspace_outdated_and_diff_names_the_task_and_why(project: Path) -> None:
    ok(project, "fork", "a")
    first = listed(project)["a"]
    assert first["outdated"] is False
    assert [item["path"] for item in first["provenance"]["final"]] == ["finish"]
    assert ok(project, "--json", "diff", "a").json == {"workspace": "a", "outdated": False, "changes": []}
    assert "a is up to date" in ok(project, "diff", "a").stdout

    set_version(project, "2")  # the handler's module constant: its fingerprint changes
    assert listed(project)["a"]["outdated"] is True
    human = ok(project, "ls").stdout
    row = next(line.split() for line in human.splitlines() if line.startswith("a "))
    assert row[:2] == ["a", "ready"] and "outdated" in row, human
    expected = {
        "workspace": "a",
        "outdated": True,
        "changes": [
            {
                "path": "build",
                # Worded as rig plan words it: the component that changed.
                "reason": {
                    "code": "task-changed",
                    "message": "global VERSION (rig_config.py) changed",
                    "component": "global VERSION (rig_config.py)",
                },
            },
            {"path": "finish", "reason": {"code": "upstream-changed", "message": "an upstream task ran again"}},
        ],
    }
    assert ok(project, "--json", "diff", "a").json == expected
    shown = ok(project, "diff", "a").stdout
    assert "a is outdated: 2 tasks differ" in shown and "task-changed" in shown

    ok(project, "apply")  # the cache moves on; the workspace is still made from the old runs
    assert listed(project)["a"]["outdated"] is True
    assert ok(project, "--json", "diff", "a").json == expected
    assert ok(project, "--json", "op", "a", "read").json == "1"

    # A workspace made now is current; the old one is still outdated.
    ok(project, "fork", "b")
    assert {name: item["outdated"] for name, item in listed(project).items()} == {"a": True, "b": False}


def test_replace_remakes_the_workspace_from_the_current_snapshot_and_removes_the_old_machine(project: Path) -> None:
    made = ok(project, "--json", "fork", "a").json
    set_version(project, "2")
    replaced = ok(project, "--json", "fork", "a", "--replace").json
    assert replaced["name"] == "a" and replaced["id"] == made["id"] and replaced["status"] == "ready"
    assert replaced["ctx"]["machine"] != made["ctx"]["machine"]
    assert machine_dirs(project) == {replaced["ctx"]["machine"]}  # the old machine is gone
    assert ok(project, "--json", "op", "a", "read").json == "2"
    assert listed(project)["a"]["outdated"] is False
    # All gc finds is the first build's snapshot, which nothing refers to now: no machine, and
    # nothing the replacement made.
    leftover = ok(project, "--json", "gc", "--dry-run").json["removed"]
    assert [(item["kind"], item["id"]) for item in leftover] == [
        ("snapshot", made["workflow_ctx"]["base"]["snapshot_id"])
    ]

    # With no such workspace, --replace makes it.
    assert ok(project, "--json", "fork", "fresh", "--replace").json["status"] == "ready"


def test_a_failed_replacement_keeps_the_old_workspace_and_leaves_nothing(project: Path) -> None:
    made = ok(project, "--json", "fork", "a").json
    config = project / "rig_config.py"
    config.write_text(
        config.read_text().replace(
            "    machine = box.from_snapshot(",
            "    box.create_machine()\n    raise RuntimeError('no room')\n    machine = box.from_snapshot(",
            1,
        )
    )
    failed = rig(project, "fork", "a", "--replace")
    assert failed.returncode == 1
    assert "Workspace a was not replaced" in failed.stderr and "the old one is kept" in failed.stderr
    after = listed(project)["a"]
    assert after["status"] == "ready" and after["ctx"] == made["ctx"]
    assert machine_dirs(project) == {made["ctx"]["machine"]}  # the half-made machine was removed
    assert ok(project, "--json", "gc", "--dry-run").json["removed"] == []


def test_fork_from_a_live_workspace_sees_what_was_written_in_it_after_its_fork(project: Path) -> None:
    source = ok(project, "--json", "fork", "a").json
    Path(source["ctx"]["path"], "tree", "notes.txt").write_text("written in a\n")
    before = snapshot_dirs(project)
    made = ok(project, "--json", "fork", "b", "--from", "a").json
    assert made["name"] == "b" and made["status"] == "ready"
    assert Path(made["ctx"]["path"], "tree", "notes.txt").read_text() == "written in a\n"
    assert made["provenance"]["from"] == {"workspace": "a", "id": source["id"]}
    assert made["provenance"]["final"] == source["provenance"]["final"]
    new_snapshots = snapshot_dirs(project) - before
    assert len(new_snapshots) == 1  # the live snapshot, journaled as b's
    assert made["workflow_ctx"]["base"]["snapshot_id"] in new_snapshots
    kinds = sorted(item["kind"] for item in made["resources"])
    assert kinds == ["machine", "snapshot"]
    Path(source["ctx"]["path"], "tree", "notes.txt").write_text("changed in a\n")  # the two are apart
    assert Path(made["ctx"]["path"], "tree", "notes.txt").read_text() == "written in a\n"

    assert ok(project, "--json", "gc", "--dry-run").json["removed"] == []  # b refers to its snapshot
    ok(project, "rm", "b", "--yes")
    assert snapshot_dirs(project) == before  # rm removed the snapshot made for it
    assert made["ctx"]["machine"] not in machine_dirs(project)

    unknown = rig(project, "fork", "c", "--from", "nobody")
    assert unknown.returncode == 1 and 'Unknown workspace "nobody"' in unknown.stderr


def test_count_makes_the_workspaces_at_once_after_one_apply(project: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {"DRIFT_GATE": str(gate), "DRIFT_GATE_COUNT": "3"}
    made = ok(project, "fork", "w", "--count", "3", env=env)
    assert made.stdout.splitlines() == ["w-1", "w-2", "w-3"]  # one name per line on a pipe
    assert sorted(path.name for path in gate.iterdir()) == ["w-1", "w-2", "w-3"]  # all were running at once
    records = listed(project)
    assert {name: item["status"] for name, item in records.items()} == {"w-1": "ready", "w-2": "ready", "w-3": "ready"}
    assert len({item["ctx"]["machine"] for item in records.values()}) == 3
    assert made.stderr.count("apply drift") == 1  # one apply for all of them

    document = ok(project, "--json", "fork", "v", "-n", "2").json
    assert [item["name"] for item in document] == ["v-1", "v-2"]
    assert all(item["status"] == "ready" and item["workflow"] == "drift" for item in document)

    clash = rig(project, "fork", "w", "--count", "2")
    assert clash.returncode == 1 and "Workspace w-1 already exists" in clash.stderr
    assert rig(project, "fork", "x", "--count", "2", "--replace").returncode == 2
    assert rig(project, "fork", "x", "--count", "0").returncode == 2


def test_ttl_is_recorded_and_shown(project: Path) -> None:
    made = ok(project, "--json", "fork", "a", "--ttl", "8h").json
    assert made["expires_at"] is not None and made["reap_at"] == made["expires_at"]
    assert any(line.split()[0] == "a" and "in 7h" in line for line in ok(project, "ls").stdout.splitlines())
    bad = rig(project, "fork", "b", "--ttl", "soon")
    assert bad.returncode == 2 and "--ttl must be" in bad.stderr
    assert (
        json.loads(ok(project, "--json", "ls").stdout)["workflows"][0]["workspaces"][0]["expires_at"]
        == made["expires_at"]
    )
