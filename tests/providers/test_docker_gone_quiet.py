"""A Docker daemon that answered, then stopped answering: `rig ls` and `rig plan` answer within their bound.

The project is applied and forked through a relay to the real daemon (so the daemon's address,
part of every cache key, stays the same); then the relay goes quiet: it still accepts connections
and never answers. ``rig ls`` shows the workspace ``unknown`` with the endpoint and the bound,
``rig plan`` fails with one line naming both (it cannot tell whether the cached snapshot is still
there, and an uncertain answer is never "gone"), and neither hangs. Each run is held to a generous
wall-clock limit by the subprocess's own timeout. And the bound never cuts a quiet command: a
task's exec and ``rig exec`` stay silent longer than the read bound and still finish.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from e2e_support import copy_example, docker_env, rig_within

from tests.cli.cli_support import write_project
from tests.silent_peers import Relay


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done
    return done


def remove_project_resources(api: Any, project: Path) -> None:
    labels = json.dumps({"label": [f"rig.project={project}"]})
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


@dataclass
class GoneQuiet:
    project: Path
    env: dict[str, str]
    host: str
    relay: Relay

    def rig(self, *args: str) -> subprocess.CompletedProcess[str]:
        return rig_within(self.project, self.env, *args)


@pytest.fixture(scope="module")
def gone_quiet(tmp_path_factory: pytest.TempPathFactory, docker_daemons: Callable[[str], Any]) -> Iterator[GoneQuiet]:
    """The docker example applied and forked (``ws``) through a relay, which then went quiet (once for the
    module: the tests only read)."""
    daemon = docker_daemons("unix")
    tmp_path = tmp_path_factory.mktemp("gone-quiet")
    project = copy_example("docker", tmp_path)
    socket_path = tmp_path / "docker.sock"
    host = f"unix://{socket_path}"
    env = docker_env(tmp_path, host, daemon.image, RIG_CHECK_TIMEOUT="1")
    try:
        with Relay.unix(socket_path, daemon.host[len("unix://") :]) as relay:
            ok(rig_within(project, env, "apply"))
            ok(rig_within(project, env, "fork", "ws"))
            [workspace] = json.loads(ok(rig_within(project, env, "--json", "ls")).stdout)["workflows"][0]["workspaces"]
            assert workspace["live"]["state"] == "running"  # and rig ls has remembered what it asked
            relay.quiet()
            yield GoneQuiet(project, env, host, relay)
    finally:
        remove_project_resources(daemon.api, project)


def test_rig_ls_shows_the_workspace_unknown_naming_the_endpoint_and_the_bound(gone_quiet: GoneQuiet) -> None:
    listed = ok(gone_quiet.rig("--json", "ls"))
    [workflow] = json.loads(listed.stdout)["workflows"]
    [workspace] = workflow["workspaces"]
    assert workspace["live"]["state"] == "unknown"
    assert gone_quiet.host in workspace["live"]["detail"]
    assert "within 1s (RIG_CHECK_TIMEOUT)" in workspace["live"]["detail"]
    shown = ok(gone_quiet.rig("ls"))
    assert "unknown (Cannot reach the Docker daemon at" in shown.stdout
    assert "Traceback" not in shown.stderr


def test_rig_plan_fails_in_one_line_and_takes_no_snapshot_for_gone(gone_quiet: GoneQuiet) -> None:
    for args in (("plan",), ("--json", "plan")):
        planned = gone_quiet.rig(*args)
        assert planned.returncode == 1, planned
        assert planned.stdout == ""
        [line] = planned.stderr.splitlines()
        assert line.startswith(f"error: Cannot reach the Docker daemon at {gone_quiet.host}: no answer to ")
        assert line.endswith(" within 1s (RIG_CHECK_TIMEOUT)")


def test_rig_ls_no_probe_contacts_no_daemon(gone_quiet: GoneQuiet) -> None:
    before = gone_quiet.relay.accepted
    listed = ok(gone_quiet.rig("--json", "ls", "--no-probe"))
    assert gone_quiet.relay.accepted == before
    [workspace] = json.loads(listed.stdout)["workflows"][0]["workspaces"]
    assert workspace["name"] == "ws"


QUIET = """
from rigcli import define_provider, workflow
import os

app = workflow("quiet", providers={"box": define_provider("docker", image=os.environ["RIG_CHECK_IMAGE"])})


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("sleep 4; echo quiet-task-done", name="quiet")
        return {"ctx": {"image": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["image"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("box").task("build", build).workspace(create=create, remove=remove)
"""


def test_a_quiet_command_outlasts_the_read_bound(tmp_path: Path, docker_daemons: Callable[[str], Any]) -> None:
    """A command's output is a stream: silent for longer than RIG_READ_TIMEOUT, it is waited for, not cut."""
    daemon = docker_daemons("unix")
    project = write_project(tmp_path / "project", QUIET)
    env = docker_env(tmp_path, daemon.host, daemon.image, RIG_READ_TIMEOUT="2")
    try:
        applied = ok(rig_within(project, env, "apply"))
        assert "quiet-task-done" in applied.stderr
        ok(rig_within(project, env, "fork", "dev"))
        ran = ok(rig_within(project, env, "exec", "dev", "--", "sh", "-c", "sleep 4; echo quiet-exec-done"))
        assert ran.stdout == "quiet-exec-done\n"
    finally:
        remove_project_resources(daemon.api, project)


def test_a_bound_set_to_nonsense_is_one_line(tmp_path: Path, docker_daemons: Callable[[str], Any]) -> None:
    daemon = docker_daemons("unix")
    project = write_project(tmp_path / "project", QUIET)
    env = docker_env(tmp_path, daemon.host, daemon.image, RIG_CHECK_TIMEOUT="soon")
    planned = rig_within(project, env, "--json", "plan")
    assert planned.returncode == 1, planned
    assert planned.stderr.splitlines() == [
        "error: RIG_CHECK_TIMEOUT='soon' is not a number of seconds greater than 0 (the default is 5)"
    ]
    assert os.path.isdir(project)
