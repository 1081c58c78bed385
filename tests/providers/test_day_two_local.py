"""A local workspace after fork, through the installed ``rig``: live status, rm of a vanished one,
and stop/start refused in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_support import Rig, copy_example, rig_env


@pytest.fixture
def forked(tmp_path: Path) -> Rig:
    rig = Rig(copy_example("quickstart", tmp_path), rig_env(tmp_path))
    rig.json("apply")
    rig.json("fork", "dev")
    return rig


def workspace_json(rig: Rig, *args: str) -> dict[str, object]:
    (workflow,) = rig.json("ls", *args)["workflows"]
    (workspace,) = workflow["workspaces"]
    assert isinstance(workspace, dict)
    return workspace


def machine_dir(rig: Rig) -> Path:
    return Path(str(workspace_json(rig, "--no-probe")["ctx"]["path"]))  # type: ignore[index]


def test_ls_shows_a_local_machine_running_then_missing_once_its_directory_is_gone(forked: Rig) -> None:
    machine = machine_dir(forked)
    assert workspace_json(forked)["live"] == {
        "state": "running",
        "detail": f"directory .rig/machines/{machine.name}",
    }
    table = forked.run("ls").stdout
    assert "live" in table.splitlines()[3] and "running" in table

    shutil.rmtree(machine)
    assert workspace_json(forked)["live"] == {
        "state": "missing",
        "detail": f"directory .rig/machines/{machine.name} is gone",
    }
    assert "missing (directory" in forked.run("ls").stdout


def test_ls_no_probe_leaves_live_null(forked: Rig) -> None:
    shutil.rmtree(machine_dir(forked))
    workspace = workspace_json(forked, "--no-probe")
    assert workspace["live"] is None and workspace["status"] == "ready"


def test_rm_of_a_missing_workspace_needs_no_force(tmp_path: Path) -> None:
    # The project's remove hook fails on a vanished machine (it reads the machine's own file first):
    # before, only --force removed the workspace; a confirmed-missing machine now counts as removed.
    project = copy_example("quickstart", tmp_path)
    config = project / "rig_config.py"
    config.write_text(
        config.read_text().replace(
            '    box.delete_machine(workspace.ctx["machine"])',
            '    open(workspace.ctx["path"] + "/app/hello.py").close()\n'
            '    box.delete_machine(workspace.ctx["machine"])',
        )
    )
    rig = Rig(project, rig_env(tmp_path))
    rig.json("apply")
    rig.json("fork", "dev")
    shutil.rmtree(machine_dir(rig))
    done = rig.run("rm", "dev", "--yes", check=False)
    assert done.returncode == 0, done.stderr
    assert "its machine was already gone" in done.stderr
    assert rig.json("ls")["workflows"][0]["workspaces"] == []


def test_local_has_nothing_to_stop(forked: Rig) -> None:
    for verb in ("stop", "start"):
        done = forked.run(verb, "dev", check=False)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            f"error: Workspace dev uses the local provider, which has nothing to {verb}"
        ]
    assert workspace_json(forked)["live"]["state"] == "running"  # type: ignore[index]
