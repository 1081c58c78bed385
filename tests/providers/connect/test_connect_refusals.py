"""What the connect commands refuse or do first, each said in one line: a stopped docker workspace is
started first (and said on stderr, through ssh too), a local workspace made on another host of a shared
state is refused naming that host, and a third-party provider without a primitive is refused naming
the provider and the primitive."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig, write_project
from tests.providers.connect.conftest import LOCAL, Reached

STARTED = "rig: workspace dev was stopped; started it"


def _stopped(reached: Reached) -> None:
    stopped = reached.rig("stop", "dev")
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped" in reached.rig("ls").stdout


def test_a_stopped_workspace_is_started_first_and_said(docker_reached: Reached, tmp_path: Path) -> None:
    reached = docker_reached  # a local workspace has nothing to stop
    reached.end_masters()
    _stopped(reached)
    done = reached.ssh("-o", "ControlPath=none", reached.alias, "cat /greeting.txt")
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"hello\n"
    assert STARTED.encode() in done.stderr  # the proxy's stderr reaches the user through ssh
    _stopped(reached)
    copied = reached.rig("cp", "dev:/greeting.txt", str(tmp_path / "g.txt"))
    assert copied.returncode == 0, copied.stderr
    assert copied.stderr.strip() == STARTED
    assert (tmp_path / "g.txt").read_text() == "hello\n"


def test_a_local_workspace_of_another_host_is_refused_naming_it(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", LOCAL)
    env = env_with_rig({"RIG_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)})

    def rig(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([RIG, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)

    assert rig("fork", "dev").returncode == 0
    # As a team's shared state has it: the workspace was made by rig on another machine.
    with closing(sqlite3.connect(project / ".rig" / "state.sqlite")) as db, db:
        db.execute("UPDATE workspaces SET owner = 'alice@build-box-7' WHERE name = 'dev'")
    for args in (["ssh-proxy", "dev"], ["cp", "dev:greeting.txt", str(tmp_path)], ["forward", "dev", "0:8000"]):
        done = rig(*args)
        assert done.returncode == 1, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (args, lines)
        assert "is a local workspace on host build-box-7; connect to it from there" in lines[0]


PLUGIN = """
from rigcli.provider_api import LiveStatus


class Runtime:
    def __init__(self, context):
        self.context = context

    def create_machine(self):
        effect = self.context.effects.requested("machine", {"name": "bare"})
        self.context.effects.confirmed(effect)
        return effect


class Controller:
    provider_id = "bare"

    def runtime(self, context):
        return Runtime(context)

    def probe(self, resources):
        return {item["id"]: LiveStatus("running", "up") for item in resources if item["kind"] == "machine"}

    def remove_effect(self, effect):
        return True


class Plugin:
    provider_id = "bare"

    def create_provider(self, setup):
        return Controller()


plugin = Plugin()
"""

BARE = """
from rigcli import define_provider, workflow

app = workflow("bare", providers={"bare": define_provider("bare")})


def base(step):
    return {"ctx": {}}


def create(workflow, bare):
    return {"machine": bare.create_machine()}


workflows = app.sequence("s").task("base", base).workspace(create=create)
"""


def test_a_provider_without_a_primitive_is_refused_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "bare_rig.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "bare_rig-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bare-rig\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[rig.providers]\nbare = bare_rig:plugin\n")
    project = write_project(tmp_path / "proj", BARE)
    env = env_with_rig({"RIG_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PYTHONPATH": str(site)})

    def rig(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "rigcli", *args], cwd=project, env=env, capture_output=True, text=True, timeout=120
        )

    forked = rig("fork", "dev")
    assert forked.returncode == 0, forked.stderr
    cases = {
        ("ssh-proxy", "dev"): "no exec streams (SupportsExecStreams)",
        ("cp", "dev:/x", str(tmp_path)): "no file archives (SupportsFileArchives)",
        ("forward", "dev", "0:80"): "no port streams (SupportsPortStreams)",
    }
    for args, said in cases.items():
        done = rig(*args)
        assert done.returncode == 1, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "uses the bare provider, which has " + said in lines[0], (args, lines)
