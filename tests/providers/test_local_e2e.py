"""The quickstart example end to end with the local provider: through the engine API and the rig CLI."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pexpect
import pytest
from e2e_support import RIG, Rig, copy_example, provider_storage, rig_env, statuses, with_engine

from tests.helpers import with_terminal_shell


@pytest.fixture
def quickstart(tmp_path: Path) -> Rig:
    return Rig(copy_example("quickstart", tmp_path), rig_env(tmp_path))


def snapshot_dir(project: Path, ref: dict[str, Any]) -> Path:
    return project / ".rig" / "snapshots" / ref["snapshot_id"]


def test_the_cli_story_apply_cache_rebuild_fork_operate_remove(quickstart: Rig) -> None:
    project = quickstart.project
    applied = quickstart.json("apply")
    base = applied["context"]["base"]
    assert base["provider"] == "local" and base["kind"] == "dirSnapshot"
    assert (snapshot_dir(project, base) / "files" / "app" / "hello.py").is_file()
    assert statuses(applied["plan"]) == {
        "tooling": ("pending", "no-previous-run"),
        "project": ("pending", "upstream-pending"),
    }
    assert list((project / ".rig" / "machines").iterdir()) == []  # build machines are cleaned up

    again = quickstart.json("apply")
    assert again["plan"]["cached_node_count"] == again["plan"]["node_count"] == 2
    assert again["context"] == applied["context"]

    shutil.rmtree(snapshot_dir(project, base))
    plan = quickstart.json("plan")
    assert statuses(plan) == {"tooling": ("cached", "cached"), "project": ("pending", "artifact-invalid")}
    rebuilt = quickstart.json("apply")["context"]["base"]
    assert rebuilt["snapshot_id"] != base["snapshot_id"]
    assert (snapshot_dir(project, rebuilt) / "snapshot.json").is_file()

    workspace = quickstart.json("fork", "dev")
    assert workspace["name"] == "dev" and workspace["workflow_ctx"]["base"] == rebuilt
    machine = Path(workspace["ctx"]["path"])
    assert machine.parent == project / ".rig" / "machines" and machine.name == workspace["ctx"]["machine"]
    assert (machine / "app" / "test_hello.py").is_file() and (machine / "bin" / "greet").is_file()

    status = quickstart.json("op", "dev", "status")
    assert status == {"machine": machine.name, "output": f"hello, {machine.name}\ntests passed\n"}
    assert quickstart.json("op", "dev", "path") == str(machine)

    removed = quickstart.json("rm", "dev", "--yes")
    assert removed["name"] == "dev"
    assert not machine.exists()
    store, storage = provider_storage(project, "local")
    try:
        assert storage.get(f"machine:{machine.name}") is None
        assert storage.get(f"snapshot:{rebuilt['snapshot_id']}") is not None
    finally:
        store.close()
    assert quickstart.run("--json", "rm", "dev", "--yes", check=False).returncode == 1


def test_the_quickstarts_shell_is_rigs_in_the_machine_and_exits_with_the_shells_code(quickstart: Rig) -> None:
    machine = quickstart.json("fork", "dev")["ctx"]["machine"]
    env = {**quickstart.env, "SHELL": "/bin/sh", "PS1": "$ "}
    child = pexpect.spawn(RIG, ["shell", "dev"], cwd=str(quickstart.project), env=env, encoding="utf-8", timeout=60)
    child.sendline('echo "inside-$(basename "$PWD")"; exit 7')
    child.expect_exact(f"inside-{machine}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 7

    done = quickstart.run("exec", "dev", "--", "sh", "-c", "test -f app/hello.py && exit 5", check=False)
    assert (done.returncode, done.stdout, done.stderr) == (5, "", ""), done


def test_the_terminal_provider_opens_the_users_terminal_in_the_machine(quickstart: Rig) -> None:
    with_terminal_shell(quickstart.project)
    machine = quickstart.json("fork", "dev")["ctx"]["machine"]
    env = {**quickstart.env, "SHELL": "/bin/sh", "PS1": "$ "}
    child = pexpect.spawn(RIG, ["op", "dev", "terminal"], cwd=str(quickstart.project), env=env, encoding="utf-8")
    child.timeout = 60
    child.sendline('echo "inside-$RIG_MACHINE_ID-$(basename "$PWD")"; exit 0')
    child.expect_exact(f"inside-{machine}-{machine}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    done = quickstart.run("op", "dev", "terminal", check=False)
    assert done.returncode == 1
    assert "no interactive terminal is available" in done.stderr


def test_the_engine_api_story(tmp_path: Path) -> None:
    project = copy_example("quickstart", tmp_path)
    env = rig_env(tmp_path)

    async def story(engine: Any) -> dict[str, Any]:
        first = await engine.planner.apply()
        second = await engine.planner.plan()
        workspace = await engine.workspaces.fork(name="dev")
        status = await engine.operations.run_workspace_operation("dev", "status", input={})
        removed = await engine.workspaces.remove_workspace(name="dev")
        return {"first": first, "second": second, "workspace": workspace, "status": status, "removed": removed}

    seen = with_engine(project, env, story)
    assert seen["second"].cached_node_count == seen["second"].node_count == 2
    assert seen["first"].context == seen["second"].final_context
    machine = Path(seen["workspace"].ctx["path"])
    assert seen["status"]["output"] == f"hello, {machine.name}\ntests passed\n"
    assert seen["removed"].name == "dev"
    assert not machine.exists()
