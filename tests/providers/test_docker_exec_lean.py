"""Through `rig` on a real daemon: `rig exec` without loading the config (what the last full load
remembered) answers exactly as the full way does, and gives way to it whenever the config, the
environment, the workspace or the state says something the memo does not know."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import Result, run_rig, write_project
from tests.hostile.signals import Docker

TOKEN = "tok-exec-lean-7d2c"
# Each import of the config appends a line to loads.txt: how a test sees whether rig loaded it.
CONFIG = """
from pathlib import Path

from pydantic import BaseModel
from rigcli import Arg, define_provider, env, secret, workflow

with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")

IMAGE = env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
box = define_provider("docker", image=IMAGE, env={"GREETING": @GREETING@, "TOKEN": secret("RIG_TEST_TOKEN")})
app = workflow("box", providers={"box": box})


def build(step, box):
    machine = box.create_machine()
    try:
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "container": machine.container_id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("box").task("build", build).workspace(create=create, remove=remove)
"""
OWN_EXEC = """

class ExecInput(BaseModel):
    command: str = Arg(position=0, description="shell command")


def own_exec(workspace, input):
    print(f"the project's exec: {input.command}")


workflows = workflows.workspace_operation("exec", run=own_exec, input=ExecInput)
"""
ENV = {"RIG_TEST_TOKEN": TOKEN, "RIG_RENDER": "0"}
PROGRAM = 'echo "out $GREETING"; echo "err $TOKEN" >&2; exit 3'


def config(greeting: str = 'env("RIG_TEST_GREETING", "hello")', extra: str = "") -> str:
    return CONFIG.replace("@GREETING@", greeting) + extra


@pytest.fixture
def project(tmp_path: Path, docker_daemon: Any) -> Iterator[Path]:
    """A project with workspace ``dev`` forked (its containers and images removed after)."""
    project = write_project(tmp_path / "project", config())
    forked = rig(project, "fork", "dev")
    assert forked.stdout.strip() == "dev"
    yield project
    labels = json.dumps({"label": [f"rig.project={project}"]})
    api = docker_daemon.api
    for item in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{item['Id']}", params={"force": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def rig(project: Path, *args: str, code: int = 0, input: str | None = None, **env: str) -> Result:
    result = run_rig(*args, cwd=project, env={**ENV, **env}, input=input, subprocess=True)
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr, result
    return result


def loads(project: Path) -> int:
    return (project / "loads.txt").read_text().count("loaded")


def memo_text(home: Path) -> str:
    files = sorted((home / "cache" / "answers").glob("*.marshal"))
    assert files, "no memo was written"
    # marshal keeps a string's UTF-8 bytes as they are: a secret in the memo would show in them.
    return "".join(path.read_bytes().decode("utf-8", "replace") for path in files)


def test_a_second_exec_runs_without_the_config_with_the_same_exit_code_and_streams(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = loads(project)
    full = rig(project, "exec", "dev", "--", "sh", "-c", PROGRAM, code=3)
    assert loads(project) == before + 1  # the full way loads it, and remembers what exec needs
    assert (full.stdout, full.stderr) == ("out hello\n", f"err {TOKEN}\n")  # the program's own bytes

    lean = rig(project, "exec", "dev", "--", "sh", "-c", PROGRAM, code=3)
    assert loads(project) == before + 1  # not loaded again
    assert (lean.stdout, lean.stderr) == (full.stdout, full.stderr)
    assert rig(project, "exec", "dev", "--", "true").stdout == ""
    assert rig(project, "exec", "dev", "--", "sh", "-c", "kill -INT $$", code=130).stdout == ""
    assert rig(project, "--workflow", "box", "exec", "dev", "--", "sh", "-c", "exit 0").returncode == 0
    assert rig(project, "exec", "dev", "--", "cat", input="piped stdin\n").stdout == "piped stdin\n"
    assert loads(project) == before + 1
    assert TOKEN not in memo_text(Path(os.environ["RIG_HOME"]))  # secret() is remembered as a reference


def test_the_environment_is_read_at_each_exec_and_a_changed_config_is_loaded_again(project: Path) -> None:
    assert rig(project, "exec", "dev", "--", "sh", "-c", 'echo "$GREETING"').stdout == "hello\n"
    # env() is resolved when the program starts, as the full way does: a new value is seen at once.
    assert rig(project, "exec", "dev", "--", "sh", "-c", 'echo "$GREETING"', RIG_TEST_GREETING="bonjour").stdout == (
        "bonjour\n"
    )
    before = loads(project)
    time.sleep(0.01)  # a new mtime even on a coarse clock
    (project / "rig_config.py").write_text(config('"hola"'))
    assert rig(project, "exec", "dev", "--", "sh", "-c", 'echo "$GREETING"').stdout == "hola\n"
    assert loads(project) == before + 1  # the edit was seen: loaded, and remembered anew
    assert rig(project, "exec", "dev", "--", "sh", "-c", 'echo "$GREETING"').stdout == "hola\n"
    assert loads(project) == before + 1


def test_a_project_exec_operation_wins_once_the_config_gains_one(project: Path) -> None:
    rig(project, "exec", "dev", "--", "true")
    assert rig(project, "exec", "dev", "--", "echo", "lean").stdout == "lean\n"
    time.sleep(0.01)
    (project / "rig_config.py").write_text(config(extra=OWN_EXEC))

    for _ in range(2):  # the full way, then what it remembered: the operation, each time
        ran = rig(project, "exec", "dev", "--", "echo", "lean")
        assert "the project's exec: echo lean" in ran.stdout + ran.stderr and ran.stdout != "lean\n"


def test_a_stopped_workspace_is_refused_by_the_full_way_and_started_with_start(
    project: Path, docker_daemon: Any
) -> None:
    rig(project, "exec", "dev", "--", "true")  # remembered
    (workspace,) = json.loads(rig(project, "--json", "ls", "--no-probe").stdout)["workflows"][0]["workspaces"]
    cid = workspace["ctx"]["container"]
    assert docker_daemon.api.post(f"/containers/{cid}/stop", params={"t": "0"}).status_code == 204

    refused = rig(project, "exec", "dev", "--", "echo", "hi", code=1)
    assert "Workspace dev is stopped" in refused.stderr and refused.stdout == ""
    assert rig(project, "exec", "--start", "dev", "--", "echo", "hi").stdout == "hi\n"
    assert rig(project, "exec", "dev", "--", "echo", "again").stdout == "again\n"


def test_an_expired_workspace_is_still_reaped_by_exec(project: Path, docker_daemon: Any) -> None:
    docker = Docker(docker_daemon.api)
    rig(project, "fork", "brief", "--ttl", "8s")
    due_by = time.monotonic() + 8.5  # brief's expiry was set during its fork, before this
    rig(project, "exec", "dev", "--", "true")  # remembered, and nothing was due yet
    assert len(docker.containers(project)) == 2
    time.sleep(max(0.0, due_by - time.monotonic()))

    assert rig(project, "exec", "dev", "--", "echo", "still here").stdout == "still here\n"
    assert len(docker.containers(project)) == 1  # that exec reaped brief (rig ls below would too)
    listed = json.loads(rig(project, "--json", "ls", "--no-probe").stdout)["workflows"][0]["workspaces"]
    names = [item["name"] for item in listed]
    assert names == ["dev"]
