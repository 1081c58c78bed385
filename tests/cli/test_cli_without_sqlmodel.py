"""sqlmodel is a test dependency: rig runs without it (the schema's description, state/tables.py, is for tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.cli_support import run_rig

BLOCKED = ("sqlmodel", "sqlalchemy")
WORKSPACE_KEYS = [
    "id",
    "name",
    "workflow",
    "workflow_ctx",
    "ctx",
    "status",
    "resources",
    "error",
    "created_at",
    "updated_at",
    "owner",
    "pid",
    "host",
    "provenance",
    "expires_at",
    "idle_stop",
    "reap_at",
]

_IMPORT_ALL = """
import importlib, pkgutil, sys
import rigcli, providers
names = [info.name for package in (rigcli, providers)
         for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
for name in sorted(names):
    if name != "rigcli.state.tables":
        importlib.import_module(name)
print(len(names))
"""


def _without_sqlmodel(tmp_path: Path) -> dict[str, str]:
    """An environment where importing sqlmodel or sqlalchemy fails, as on a machine without them."""
    shadow = tmp_path / "shadow"
    for name in BLOCKED:
        (shadow / name).mkdir(parents=True)
        (shadow / name / "__init__.py").write_text(f"raise ImportError('{name} is not installed here')\n")
    return {"PYTHONPATH": str(shadow)}


def test_every_rig_module_imports_without_sqlmodel_and_only_the_schema_description_needs_it(tmp_path: Path) -> None:
    env = {**_without_sqlmodel(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100  # every module of rigcli and providers was imported
    control = subprocess.run(
        [sys.executable, "-c", "import rigcli.state.tables"], capture_output=True, env=env, cwd=tmp_path, check=False
    )
    assert b"is not installed here" in control.stderr  # the shadow works: the check above means something


def test_plan_apply_fork_ls_rm_and_doctor_run_without_sqlmodel(dev_project: Path, tmp_path: Path) -> None:
    env = _without_sqlmodel(tmp_path)

    def rig(*args: str) -> object:
        result = run_rig("--json", *args, cwd=dev_project, env=env, subprocess=True)
        assert result.returncode == 0, result
        return result.json

    applied = rig("apply")
    assert isinstance(applied, dict) and applied["workflow"] == "dev"
    plan = rig("plan")
    assert isinstance(plan, dict) and plan["cached_node_count"] == plan["node_count"] > 0
    forked = rig("fork", "dev")
    assert isinstance(forked, dict) and list(forked) == WORKSPACE_KEYS  # DESIGN §6: the workspace record
    assert (forked["name"], forked["status"], forked["pid"]) == ("dev", "ready", None)
    listed = rig("ls")
    assert isinstance(listed, dict)
    (workspace,) = listed["workflows"][0]["workspaces"]
    # DESIGN §11: ls adds each workspace's live status to the record (this project's has no machine)
    assert workspace.pop("live") == {"state": "unknown", "detail": "no machine is recorded for it"}
    # DESIGN §12: and its ssh alias and declared ports (none here)
    assert (workspace.pop("ssh"), workspace.pop("ports")) == ("dev.dev-project.rig", [])
    assert workspace == {**forked, "outdated": False}
    removed = rig("rm", "dev", "--yes")
    assert isinstance(removed, dict) and list(removed) == WORKSPACE_KEYS
    assert (removed["id"], removed["status"]) == (forked["id"], "removed")  # the record's final status
    report = rig("doctor")
    assert isinstance(report, dict) and "sqlmodel" not in report["packages"]
