"""Through `rig` on a real daemon: `rig ls` without loading the config (what the last full `rig ls`
planned) prints exactly what the full way prints, and gives way to it whenever an input of those
plans may have changed: the config, a helper module, `.env`, the environment, the run journal, the
clock, an artifact the plans validated, or a workspace due to expire."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import Result, run_rig, write_project
from tests.helpers import imported_by_rig

# Each import of the config appends a line to loads.txt: how a test sees whether rig loaded it.
CONFIG = """
import os
from pathlib import Path

from helper import GREETING
from rigcli import define_provider, env, workflow

GREETING = os.environ.get("RIG_TEST_GREETING", GREETING)  # read when the config is imported

with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")

box = define_provider("docker", image=env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
app = workflow("box", providers={"box": box})


def build(step, box):
    machine = box.create_machine()
    try:
        base = machine.snapshot_ref()
        spare = machine.snapshot_ref()  # validated by every plan, used by no workspace
        return {"ctx": {"base": base, "spare": spare, "greeting": GREETING}}
    finally:
        machine.delete()


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "container": machine.container_id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("box").task("build", build, cache_ttl=@TTL@).workspace(create=create, remove=remove)
"""
ENV = {"RIG_RENDER": "0"}
# The daemon's own words for a container change by the second ("Up 4 seconds", "Exited (143) 3 seconds ago").
DAEMON_CLOCK = re.compile(r"(\d+|About an?|Less than a) (second|minute|hour)s?")
WHITESPACE = re.compile(r"[ \t]+|─+")
MODULES = ("rigcli.engine.planner", "rigcli.authoring", "rigcli.config_loader", "rigcli.engine.project")


def config(ttl: str = "None") -> str:
    return CONFIG.replace("@TTL@", ttl)


def make_project(directory: Path, ttl: str = "None") -> Path:
    return write_project(directory, config(ttl), **{"helper.py": 'GREETING = "hello"\n'})


@pytest.fixture
def cleanup(docker_daemon: Any) -> Iterator[list[Path]]:
    """Projects to clean after the test: their containers and images removed from the daemon."""
    projects: list[Path] = []
    yield projects
    api = docker_daemon.api
    for project in projects:
        labels = json.dumps({"label": [f"rig.project={project}"]})
        for item in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
            api.delete(f"/containers/{item['Id']}", params={"force": "true"})
        for image in api.get("/images/json", params={"filters": labels}).json():
            api.delete(f"/images/{image['Id']}", params={"force": "true"})


@pytest.fixture
def project(tmp_path: Path, cleanup: list[Path]) -> Path:
    """A docker project with workspace ``a`` forked."""
    project = make_project(tmp_path / "project")
    cleanup.append(project)
    assert rig(project, "fork", "a").stdout.strip() == "a"
    return project


def rig(project: Path, *args: str, code: int = 0, **env: str) -> Result:
    result = run_rig(*args, cwd=project, env={**ENV, **env}, subprocess=True)
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr, result
    return result


def loads(project: Path) -> int:
    return (project / "loads.txt").read_text().count("loaded")


def forget_memo() -> None:
    """The next command loads the config: what a test compares the lean answer with."""
    for path in (Path(os.environ["RIG_HOME"]) / "cache" / "answers").glob("*.marshal"):
        path.unlink()


def full_and_lean(project: Path, *args: str, **env: str) -> tuple[Result, Result]:
    """``rig ARGS`` the full way (the memo forgotten), then lean; asserts which way each went."""
    forget_memo()
    before = loads(project)
    full = rig(project, *args, **env)
    assert loads(project) == before + 1
    lean = rig(project, *args, **env)
    assert loads(project) == before + 1, "the second rig ls loaded the config"
    return full, lean


def answer(project: Path, *args: str, **env: str) -> tuple[Result, bool]:
    """``rig ARGS`` and whether it loaded the config."""
    before = loads(project)
    result = rig(project, *args, **env)
    return result, loads(project) > before


def but_the_daemons_clock(output: str) -> list[str]:
    """The lines of ``output`` without the daemon's "N seconds" (nor the column widths it sets)."""
    return [line.rstrip() for line in WHITESPACE.sub(" ", DAEMON_CLOCK.sub("T", output)).splitlines()]


def workspaces(result: Result) -> dict[str, dict[str, Any]]:
    document = json.loads(result.stdout)
    return {item["name"]: item for flow in document["workflows"] for item in flow["workspaces"]}


def container(project: Path, name: str) -> str:
    return str(workspaces(rig(project, "--json", "ls", "--no-probe"))[name]["ctx"]["container"])


def test_lean_ls_prints_what_the_full_way_prints_for_current_outdated_stopped_and_missing(
    project: Path, docker_daemon: Any
) -> None:
    rig(project, "fork", "b")
    rig(project, "fork", "c")
    (project / "helper.py").write_text('GREETING = "bonjour"\n')  # the task changes: a, b, c are outdated
    rig(project, "apply")
    rig(project, "fork", "d")  # made from the new run: current
    api = docker_daemon.api
    api.post(f"/containers/{container(project, 'b')}/stop", params={"t": "0"}, timeout=60)
    api.delete(f"/containers/{container(project, 'c')}", params={"force": "true"})
    for args in (("ls",), ("--json", "ls"), ("ls", "--no-probe"), ("--json", "ls", "--no-probe")):
        full, lean = full_and_lean(project, *args)
        assert but_the_daemons_clock(lean.stdout) == but_the_daemons_clock(full.stdout), args
        assert lean.stderr == full.stderr, args
    shown = workspaces(rig(project, "--json", "ls"))
    assert {name: item["outdated"] for name, item in shown.items()} == {"a": True, "b": True, "c": True, "d": False}
    assert {name: item["live"]["state"] for name, item in shown.items()} == {
        "a": "running",
        "b": "stopped",
        "c": "missing",
        "d": "running",
    }
    human = rig(project, "ls").stdout
    assert "outdated" in human and "current" in human and "missing" in human
    assert "rig diff WORKSPACE" in rig(project, "ls").stderr


def test_the_lean_way_imports_neither_the_config_nor_the_dsl_nor_the_planner(project: Path) -> None:
    rig(project, "ls", PYTHONPROFILEIMPORTTIME="1")  # the full way, which remembers (this environment)
    lean = rig(project, "ls", PYTHONPROFILEIMPORTTIME="1")
    imported = imported_by_rig(lean.stderr)
    assert "rigcli.cache.answers" in imported and "rigcli.cache.planning" not in imported  # remembered
    assert not imported & set(MODULES), imported & set(MODULES)
    heavy = (
        "typing",
        "dataclasses",
        "pathlib",
        "threading",
        "datetime",
        "json",
        "re",
        "enum",
        "contextlib",
        "importlib",
        "typer",
        "rich",
        "pydantic",
        "httpx",
        "asyncio",
    )
    if os.environ["DOCKER_HOST"].startswith("unix://"):  # tcp and ssh daemons need more to be reached
        assert not {name for name in imported if name.split(".")[0] in heavy}


@pytest.mark.parametrize("change", ["config", "helper", "dotenv", "environment", "variable read at import"])
def test_a_changed_project_file_or_environment_makes_ls_load_the_config_and_answer_right(
    project: Path, change: str
) -> None:
    rig(project, "ls")
    assert answer(project, "ls")[1] is False
    time.sleep(0.01)  # a new mtime even on a coarse clock
    env: dict[str, str] = {}
    if change == "config":
        (project / "rig_config.py").write_text(config().replace('"greeting": GREETING', '"greeting": "hi"'))
    elif change == "helper":
        (project / "helper.py").write_text('GREETING = "salut"\n')
    elif change == "dotenv":
        (project / ".env").write_text("UNRELATED=1\n")
    elif change == "variable read at import":  # no env() the memo could resolve again: the whole environment
        env["RIG_TEST_GREETING"] = "hola"
    else:  # another image for the provider: another provider fingerprint, so a pending task
        env["RIG_TEST_DOCKER_IMAGE"] = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox") + "-other"
    result, loaded = answer(project, "--json", "ls", "--no-probe", **env)
    assert loaded
    outdated = change != "dotenv"  # .env holds nothing the workflow reads
    assert workspaces(result)["a"]["outdated"] is outdated
    flow = json.loads(result.stdout)["workflows"][0]
    assert (flow["cached_node_count"], flow["node_count"]) == ((0, 1) if outdated else (1, 1))
    again, loaded = answer(project, "--json", "ls", "--no-probe", **env)
    assert not loaded and again.stdout == result.stdout  # remembered anew


@pytest.mark.parametrize("change", ["invalidate", "new run", "clear"])
def test_a_changed_run_journal_makes_ls_load_the_config_and_answer_right(project: Path, change: str) -> None:
    rig(project, "ls")
    assert answer(project, "ls")[1] is False
    if change in ("invalidate", "new run"):
        rig(project, "cache", "invalidate", "build")
    if change == "new run":
        rig(project, "apply")
    if change == "clear":
        rig(project, "cache", "clear", "--yes")
    result, loaded = answer(project, "--json", "ls", "--no-probe")
    assert loaded
    assert workspaces(result)["a"]["outdated"] is True
    flow = json.loads(result.stdout)["workflows"][0]
    assert flow["cached_node_count"] == (1 if change == "new run" else 0)


def test_a_validated_artifact_that_is_gone_makes_ls_load_the_config(project: Path, docker_daemon: Any) -> None:
    rig(project, "ls")
    assert answer(project, "ls")[1] is False
    spare = workspaces(rig(project, "--json", "ls", "--no-probe"))["a"]["workflow_ctx"]["spare"]["image_id"]
    docker_daemon.api.delete(f"/images/{spare}", params={"force": "true"})
    result, loaded = answer(project, "--json", "ls")
    assert loaded
    assert workspaces(result)["a"]["outdated"] is True  # the plan would build it again
    assert json.loads(result.stdout)["workflows"][0]["cached_node_count"] == 0


def test_a_cache_ttl_that_runs_out_makes_ls_load_the_config(tmp_path: Path, cleanup: list[Path]) -> None:
    project = make_project(tmp_path / "project", ttl="8")
    cleanup.append(project)
    rig(project, "fork", "a")
    made = time.monotonic()
    rig(project, "ls", "--no-probe")  # --no-probe remembers a listing of its own (planned offline)
    result, loaded = answer(project, "--json", "ls", "--no-probe")
    if time.monotonic() - made < 7:  # still within the ttl (a slow machine may be past it)
        assert not loaded and workspaces(result)["a"]["outdated"] is False
    time.sleep(max(0.0, 8.5 - (time.monotonic() - made)))
    result, loaded = answer(project, "--json", "ls", "--no-probe")
    assert loaded
    assert workspaces(result)["a"]["outdated"] is True
    assert json.loads(result.stdout)["workflows"][0]["cached_node_count"] == 0


def test_a_workspace_due_to_expire_is_reaped_by_ls_the_full_way(project: Path) -> None:
    rig(project, "fork", "short", "--ttl", "8s")
    rig(project, "ls")
    result, loaded = answer(project, "--json", "ls")
    due = datetime.fromisoformat(str(workspaces(result)["short"]["expires_at"])).timestamp()
    early = time.time() < due - 0.5  # not yet due (a slow machine may be past it)
    if early:
        assert not loaded and set(workspaces(result)) == {"a", "short"}
    time.sleep(max(0.0, due + 0.5 - time.time()))
    result, loaded = answer(project, "--json", "ls")
    assert set(workspaces(result)) == {"a"}
    assert loaded or not early  # when it was still listed lean, this ls reaped it the full way


def test_plan_of_a_docker_project_answers_lean_until_a_validated_artifact_is_gone(
    project: Path, docker_daemon: Any
) -> None:
    for args in (("plan",), ("--json", "plan")):
        full, lean = full_and_lean(project, *args)
        assert (lean.stdout, lean.stderr) == (full.stdout, full.stderr), args
    assert json.loads(lean.stdout)["provider_checks"], "the docker provider's checks are part of the plan"
    spare = workspaces(rig(project, "--json", "ls", "--no-probe"))["a"]["workflow_ctx"]["spare"]["image_id"]
    docker_daemon.api.delete(f"/images/{spare}", params={"force": "true"})
    result, loaded = answer(project, "--json", "plan")
    assert loaded
    assert json.loads(result.stdout)["cached_node_count"] == 0  # the plan would build it again
