"""Expiry on the local provider, through the installed rig: `workspace(ttl=...)` and `rig fork --ttl`,
reaped by the next command and by `rig reap`; a failed reap is marked and kept; a create still
running is never reaped."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import Result, env_with_rig, rig_executable, run_rig, write_project
from tests.helpers import wait_for

CONFIG = """
import os
import time
from pathlib import Path

from rigcli import define_provider, workflow

app = workflow("expiry", providers={"box": define_provider("local")})


def build(step, box):
    machine = box.create_machine()
    machine.exec("mkdir -p tree", name="files")
    ref = machine.snapshot_ref()
    machine.delete()
    return {"ctx": {"base": ref}}


def create(workflow, workspace, box):
    hold = os.environ.get("EXPIRY_HOLD")  # the create waits until this file is gone
    if hold:
        Path(hold + ".started").touch()
        while Path(hold).exists():
            time.sleep(0.02)
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id}


def remove(workspace, box):
    if Path("remove-fails").exists():
        raise RuntimeError("the remove hook is broken")
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("expiry").task("build", build).workspace(create=create, remove=remove, ttl=TTL)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "expiry", CONFIG.replace("TTL", "None"))


def rig(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=project, env={"RIG_RENDER": "0", **(env or {})}, subprocess=True)


def ok(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    result = rig(project, *args, env=env)
    assert result.returncode == 0, result
    return result


def listed(project: Path) -> dict[str, dict[str, Any]]:
    document = ok(project, "--json", "ls").json
    return {item["name"]: item for workflow in document["workflows"] for item in workflow["workspaces"]}


def machine_dirs(project: Path) -> set[str]:
    return {path.name for path in (project / ".rig" / "machines").iterdir()}


def expire(expires_at: str) -> None:
    """Wait until ``expires_at`` is past, running no rig command (each would reap)."""
    from rigcli.records import age_seconds

    while age_seconds(expires_at) <= 0:
        time.sleep(0.05)


def test_the_dsl_ttl_is_recorded_and_any_next_command_removes_the_expired_workspace(tmp_path: Path) -> None:
    project = write_project(tmp_path / "expiry", CONFIG.replace("TTL", '"1s"'))
    kept = ok(project, "--json", "fork", "b", "--ttl", "8h").json  # --ttl overrides the DSL
    made = ok(project, "--json", "fork", "a").json
    assert made["expires_at"] is not None and made["reap_at"] == made["expires_at"]
    assert kept["expires_at"] > made["expires_at"]
    expire(made["expires_at"])

    planned = ok(project, "plan")  # a read-only command reaps too, when the lock is free at once
    assert "removed expired workspace a" in planned.stderr
    assert set(listed(project)) == {"b"}
    assert machine_dirs(project) == {kept["ctx"]["machine"]}  # its remove hook and journal ran
    assert ok(project, "--json", "gc", "--dry-run").json["removed"] == []


def test_reap_dry_run_lists_and_reap_removes(project: Path) -> None:
    ok(project, "fork", "b")  # no ttl: never reaped
    expire(ok(project, "--json", "fork", "a", "--ttl", "1s").json["expires_at"])
    # rig reap reaps only as asked (no reaping on load), so --dry-run changes nothing.
    for _ in range(2):
        dry = ok(project, "--json", "reap", "--dry-run").json
        assert dry["dry_run"] is True and [item["workspace"] for item in dry["reaped"]] == ["a"]
        assert dry["reaped"][0]["action"] == "remove" and dry["reaped"][0]["reason"] == "expired"
    assert "remove" in ok(project, "reap", "--dry-run").stdout
    done = ok(project, "--json", "reap").json
    assert [item["workspace"] for item in done["reaped"]] == ["a"]
    assert done["dry_run"] is False and done["failed"] == []
    assert set(listed(project)) == {"b"}
    assert ok(project, "--json", "reap").json == {"dry_run": False, "reaped": [], "failed": []}
    assert "nothing to reap" in ok(project, "reap").stdout


def test_a_failed_reap_marks_the_workspace_and_reap_retries_it(project: Path) -> None:
    made = ok(project, "--json", "fork", "a", "--ttl", "1s").json
    (project / "remove-fails").touch()
    expire(made["expires_at"])
    failed = rig(project, "--json", "reap")
    assert failed.returncode == 1
    assert [item["workspace"] for item in failed.json["failed"]] == ["a"]
    assert "the remove hook is broken" in failed.json["failed"][0]["error"]
    record = listed(project)["a"]
    assert record["status"] == "reap-failed" and "the remove hook is broken" in record["error"]
    shown = ok(project, "ls")
    assert any(line.split()[:2] == ["a", "reap-failed"] for line in shown.stdout.splitlines()), shown
    assert "a: reap failed: " in shown.stderr
    assert made["ctx"]["machine"] in machine_dirs(project)  # kept, not dropped

    (project / "remove-fails").unlink()
    assert [item["workspace"] for item in ok(project, "--json", "reap").json["reaped"]] == ["a"]
    assert listed(project) == {}
    assert machine_dirs(project) == set()


def test_a_workspace_whose_create_is_running_is_never_reaped(project: Path, tmp_path: Path) -> None:
    hold = tmp_path / "hold"
    hold.touch()
    creating = subprocess.Popen(
        [rig_executable(), "fork", "slow", "--ttl", "1s"],
        cwd=project,
        env=env_with_rig({"RIG_RENDER": "0", "EXPIRY_HOLD": str(hold)}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: Path(f"{hold}.started").exists(), timeout=60, what="the create hook to start")
        expire(listed(project)["slow"]["expires_at"])
        reaped = ok(project, "--json", "reap").json
        assert reaped["reaped"] == [] and reaped["failed"] == []
        assert listed(project)["slow"]["status"] == "creating"
    finally:
        hold.unlink()
        _, stderr = creating.communicate(timeout=60)
    assert creating.returncode == 0, stderr
    # Its create done, it is due at once: the next command removes it.
    assert "removed expired workspace slow" in ok(project, "ls").stderr
    assert listed(project) == {}


# The local provider with a power switch, at the provider seam: it says a machine is in use while
# the project has a "busy" file, unused since 2000 otherwise, and "stops" it by marking it.
IDLE_CONFIG = """
from datetime import datetime, timezone
from pathlib import Path

from providers.local import LocalPlugin
from providers.local.controller import LocalController
from rigcli import define_provider, workflow

HERE = Path(__file__).parent


class PoweredController(LocalController):
    def last_used(self, effect):
        if effect["kind"] != "machine" or (HERE / ("stopped-" + effect["id"])).exists():
            return None
        if (HERE / "busy").exists():
            return datetime.now(timezone.utc).isoformat()
        return "2000-01-01T00:00:00+00:00"

    def stop(self, effect):
        if (HERE / "stop-fails").exists():
            raise RuntimeError("the machine would not stop")
        (HERE / ("stopped-" + effect["id"])).touch()


class PoweredPlugin(LocalPlugin):
    def create_provider(self, setup):
        return PoweredController(setup)


app = workflow("idle", providers={"box": define_provider("local", plugin=PoweredPlugin())})


def build(step, box):
    machine = box.create_machine()
    ref = machine.snapshot_ref()
    machine.delete()
    return {"ctx": {"base": ref}}


def create(workflow, workspace, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


workflows = app.sequence("idle").task("build", build).workspace(create=create, idle_stop="1s")
"""


def test_idle_stop_stops_an_unused_workspace_where_the_provider_can_tell(tmp_path: Path) -> None:
    project = write_project(tmp_path / "idle", IDLE_CONFIG)
    (project / "busy").touch()
    made = ok(project, "--json", "fork", "a").json
    assert made["idle_stop"] == 1 and made["expires_at"] is None and made["reap_at"] is not None
    stopped = project / f"stopped-{made['ctx']['machine']}"

    expire(made["reap_at"])
    assert ok(project, "--json", "reap").json["reaped"] == []  # in use: looked at again a second later
    again = listed(project)["a"]["reap_at"]
    assert again > made["reap_at"] and not stopped.exists()

    (project / "busy").unlink()
    (project / "stop-fails").touch()
    expire(again)
    failed = rig(project, "--json", "reap")
    assert failed.returncode == 1 and failed.json["failed"][0]["action"] == "stop"
    assert listed(project)["a"]["status"] == "reap-failed"

    (project / "stop-fails").unlink()
    done = ok(project, "--json", "reap").json
    assert [(item["workspace"], item["action"], item["reason"]) for item in done["reaped"]] == [("a", "stop", "idle")]
    assert stopped.exists()
    record = listed(project)["a"]
    assert record["status"] == "ready" and record["error"] is None  # stopped, not removed


def test_rig_logs_of_a_task_reaps_an_expired_workspace_too(project: Path) -> None:
    # `rig logs TASK` may skip loading the config (the lean path); a due expiry sends it the full way.
    ok(project, "fork", "b")
    ok(project, "logs", "build")  # the full way, which remembers what `build` names
    made = ok(project, "--json", "fork", "a", "--ttl", "1s").json
    expire(made["expires_at"])
    logged = ok(project, "logs", "build")
    assert "removed expired workspace a" in logged.stderr
    assert set(listed(project)) == {"b"}
