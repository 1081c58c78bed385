"""`ports=` on `workspace(...)`: numbers and labelled ports as `rig ls --json` lists them, and what is
refused (exit 1, one line naming the mistake)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, write_project

PROJECT = """
from rigcli import define_provider, workflow

app = workflow("app", providers={"box": define_provider("local")})


def base(step, box):
    machine = box.create_machine()
    return {"ctx": {"snap": machine.snapshot_ref()}}


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["snap"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("s").task("base", base).workspace(create=create, remove=remove, ports=PORTS)
"""


def _rig(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = env_with_rig({"RIG_HOME": str(project / "home")})
    return subprocess.run([RIG, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_numbers_and_labelled_ports_in_ls_json(tmp_path: Path) -> None:
    ports = '[3000, {"port": 8080, "label": "api", "protocol": "https"}, {"port": 5432, "protocol": "tcp"}]'
    project = write_project(tmp_path / "My Project", PROJECT.replace("PORTS", ports))
    assert _rig(project, "fork", "web").returncode == 0
    (workspace,) = json.loads(_rig(project, "ls", "--json").stdout)["workflows"][0]["workspaces"]
    assert workspace["ssh"] == "web.my-project.rig"
    assert workspace["ports"] == [
        {"port": 3000, "label": "", "protocol": "http"},
        {"port": 8080, "label": "api", "protocol": "https"},
        {"port": 5432, "label": "", "protocol": "tcp"},
    ]


@pytest.mark.parametrize(
    ("ports", "said"),
    [
        ("[70000]", "70000 is not a port number"),
        ('[{"port": 80, "name": "x"}]', "unknown key 'name'"),
        ("[80, 80]", "port 80 is declared twice"),
        ('"80"', "must be a list"),
    ],
)
def test_a_wrong_port_is_refused_in_one_line(tmp_path: Path, ports: str, said: str) -> None:
    project = write_project(tmp_path / "proj", PROJECT.replace("PORTS", ports))
    done = _rig(project, "plan")
    assert done.returncode == 1
    assert said in done.stderr and "Traceback" not in done.stderr
