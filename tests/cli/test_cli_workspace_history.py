"""A workspace's history through the installed rig: its create hook, operations and removal are rows
of ``rig runs`` (command and workspace columns) whose output ``rig logs --workspace`` shows, masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import Result, run_rig_masked, write_project

TOKEN = "tok-5d2e8a41c97b3f60"
CONFIG = """
import os

from rigcli import define_provider, secret, workflow

app = workflow("hist", providers={"box": define_provider("local", env={"TOKEN": secret("RIG_TEST_TOKEN")})})


def prepare(step, box):
    machine = box.create_machine()
    machine.exec("echo prepared > marker")
    ref = machine.snapshot_ref()
    machine.delete()
    return {"ctx": {"base": ref}}


def create(workflow, workspace, box):
    print(f"creating {workspace.name}")
    machine = box.from_snapshot(workflow.ctx["base"])
    machine.exec('echo "create sees token=$TOKEN"')
    return {"machine": machine.id}


def remove(workspace, box):
    print(f"removing {workspace.name}")
    box.delete_machine(workspace.ctx["machine"])


def greet(workspace, box):
    box.from_id(workspace.ctx["machine"]).exec('echo "hello from $TOKEN"; echo oops >&2')
    if os.environ.get("RIG_TEST_FAIL"):
        raise RuntimeError("greet failed on purpose")
    return {"greeted": workspace.name}


workflows = (
    app.sequence("hist")
    .task("prepare", prepare)
    .workspace(create=create, remove=remove)
    .workspace_operation("greet", run=greet, description="Say hello")
)
"""
ENV = {"RIG_TEST_TOKEN": TOKEN, "RIG_RENDER": "0"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "hist-project", CONFIG)


def rig(project: Path, *args: str, code: int = 0, **env: str) -> Result:
    return run_rig_masked(project, args, env={**ENV, **env}, secret=TOKEN, code=code)


def _lines(result: Result) -> list[tuple[str, str]]:
    return [(line["stream"], line["data"]) for line in result.json["lines"]]


def test_runs_lists_a_workspaces_history_and_logs_shows_each_entry_masked(project: Path) -> None:
    rig(project, "apply")
    rig(project, "fork", "demo")
    rig(project, "op", "demo", "greet")
    rig(project, "op", "demo", "greet", code=1, RIG_TEST_FAIL="1")

    history = rig(project, "--json", "runs").json["runs"]
    assert [(item["command"], item["workspace"]) for item in history] == [
        ("op greet", "demo"),
        ("op greet", "demo"),
        ("create", "demo"),
        ("fork", "demo"),
        ("apply", None),
    ]
    failed, greeted, created, forked, applied = history
    assert (failed["status"], greeted["status"], created["status"]) == ("failed", "succeeded", "succeeded")
    assert "greet failed on purpose" in failed["error"]
    assert (created["node_count"], created["nodes"], forked["node_count"]) == (0, [], 1)
    assert set(applied) <= set(created)  # every key an apply has, an entry has too
    table = rig(project, "runs").stdout
    assert "command" in table.splitlines()[0] and "workspace" in table.splitlines()[0], table
    assert "op greet" in table and "create" in table, table

    latest = rig(project, "--json", "logs", "--workspace", "demo")
    assert (latest.json["run_id"], latest.json["node_path"], latest.json["status"]) == (
        failed["id"],
        "demo/greet",
        "failed",
    )
    assert ("stdout", "hello from ***") in _lines(latest) and ("stderr", "oops") in _lines(latest), latest
    made = rig(project, "--json", "logs", "--workspace", "demo", "--run", created["short_id"])
    assert (made.json["node_path"], made.json["status"]) == ("workspace:demo:create", "succeeded"), made
    assert ("info", "creating demo") in _lines(made) and ("stdout", "create sees token=***") in _lines(made), made
    plain = rig(project, "logs", "--workspace", "demo", "--run", greeted["id"][:6])
    assert "hello from ***" in plain.stdout and "oops" in plain.stdout, plain
    by_id = rig(project, "--json", "logs", "--run", greeted["short_id"])  # an entry's id alone will do
    assert (by_id.json["run_id"], by_id.json["node_path"]) == (greeted["id"], "demo/greet"), by_id
    titled = rig(project, "runs", created["short_id"]).stdout
    assert titled.startswith(f"create {created['short_id']}  hist  demo  succeeded"), titled

    rig(project, "rm", "demo", "--yes")
    removed = rig(project, "--json", "logs", "--workspace", "demo")
    assert (removed.json["node_path"], removed.json["status"]) == ("workspace:demo:remove", "succeeded"), removed
    assert ("info", "removing demo") in _lines(removed), removed
    assert rig(project, "--json", "runs").json["runs"][0]["command"] == "rm"

    rig(project, "cache", "clear", "--yes")  # the cache goes; the workspace's history is no cache
    kept = rig(project, "--json", "runs").json["runs"]
    assert [item["command"] for item in kept] == ["rm", "op greet", "op greet", "create"], kept


def test_logs_workspace_errors_are_one_line(project: Path) -> None:
    rig(project, "apply")
    unknown = rig(project, "logs", "--workspace", "nope", code=1)
    assert unknown.error_lines == ["error: No entry in the history of workspace nope (rig runs lists them)"], unknown
    both = rig(project, "logs", "prepare", "--workspace", "demo", code=2)
    assert len(both.error_lines) == 1 and "--workspace" in both.error_lines[0], both
    rig(project, "fork", "demo")
    missing = rig(project, "logs", "--workspace", "demo", "--run", "ffffffff", code=1)
    assert "ffffffff" in missing.stderr, missing
    # rig logs with no TASK still shows the last apply that ran something, not a workspace entry.
    whole = rig(project, "logs")
    assert "==> prepare" in whole.stdout, whole


def test_logs_workspace_answers_when_the_config_does_not_import(project: Path) -> None:
    rig(project, "apply")
    rig(project, "fork", "demo")
    config = project / "rig_config.py"
    config.write_text(config.read_text() + "x = (\n")
    shown = rig(project, "--json", "logs", "--workspace", "demo")
    assert shown.json["node_path"] == "workspace:demo:create", shown
    assert ("info", "creating demo") in _lines(shown), shown
