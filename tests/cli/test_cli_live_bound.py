"""rig ls waits for providers' live status at most the documented bound: one that never answers
makes its own workspaces ``unknown`` and slows the rest no further."""

from __future__ import annotations

import time
from pathlib import Path

from tests.cli.cli_support import run_rig, write_project

# A kit-built provider whose machines are journaled like any other, and whose status never comes.
SLOW_CONFIG = """
import time

from rigcli import define_provider, workflow
from rigcli.provider_kit import BaseController, BaseRuntime


class Runtime(BaseRuntime):
    def create_machine(self):
        with self.making("machine") as machine_id:
            return machine_id


class Controller(BaseController):
    provider_id = "slowbox"

    def runtime(self, context):
        return Runtime(self, context)

    def delete_machine(self, machine_id):
        return True

    def machine_status(self, machine_id):
        time.sleep(60)  # a cloud API that hangs


class Plugin:
    provider_id = "slowbox"

    def create_provider(self, setup):
        return Controller(setup)


app = workflow(
    "mixed", providers={"slow": define_provider("slowbox", plugin=Plugin()), "box": define_provider("local")}
)


def prepare(step, box):
    machine = box.create_machine()
    try:
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, workspace, box, slow):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "far": slow.create_machine()}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("mixed").task("prepare", prepare).workspace(create=create, remove=remove)
"""

LOCAL_ONLY = SLOW_CONFIG.replace(
    'return {"machine": machine.id, "far": slow.create_machine()}', 'return {"machine": machine.id}'
)


def test_a_provider_that_never_answers_is_unknown_after_the_bound_and_the_rest_is_answered(tmp_path: Path) -> None:
    project = write_project(tmp_path / "mixed", SLOW_CONFIG)
    assert run_rig("fork", "far", cwd=project).returncode == 0
    (project / "rig_config.py").write_text(LOCAL_ONLY)
    assert run_rig("fork", "near", cwd=project).returncode == 0
    (project / "rig_config.py").write_text(SLOW_CONFIG)

    started = time.monotonic()
    done = run_rig("--json", "ls", cwd=project, subprocess=True)
    took = time.monotonic() - started
    assert done.returncode == 0, done
    live = {item["name"]: item["live"] for item in done.json["workflows"][0]["workspaces"]}
    # "far" has a local machine (running) and a slowbox one (no answer): as alive as the least alive.
    assert live["far"] == {"state": "unknown", "detail": "no answer within 2s (1 of 2 machines)"}
    assert live["near"]["state"] == "running"
    assert took < 2.0 + 4.0, took  # the 2 s bound, plus rig's own start-up on a loaded machine

    quick = run_rig("--json", "ls", "--no-probe", cwd=project, subprocess=True)
    assert {item["live"] for item in quick.json["workflows"][0]["workspaces"]} == {None}
