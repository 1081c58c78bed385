"""DESIGN §11's CI gates and ``--only`` through the installed rig: ``plan --detailed-exitcode``
(0 nothing pending, 2 pending, 1 error), ``apply --expect-cached`` (exit 5, nothing ran) and
``apply --only TASK...`` (those tasks and their pending upstream, nothing downstream)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.cli.cli_support import run_rig, write_project

# A ran file per task says what really ran; a parallel block shows "upstream" is not "earlier".
CONFIG = """
import os
from pathlib import Path

from rigcli import sequence


def mark(name):
    def handler(step):
        with open(Path(os.environ["RAN_LOG"]), "a") as log:
            log.write(name + "\\n")
        if os.environ.get("FAIL") == name:
            raise RuntimeError("boom")
        return None

    handler.__name__ = name
    return handler


workflows = (
    sequence("w")
    .task("base", mark("base"), version=os.environ.get("BASE_VERSION", "1"))
    .parallel(
        left=sequence("left").task("build", mark("build")),
        right=sequence("right").task("lint", mark("lint")),
    )
    .task("deploy", mark("deploy"))
)
"""


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = write_project(tmp_path / "gates", CONFIG)
    return project, {"RAN_LOG": str(tmp_path / "ran.log")}


def _ran(env: dict[str, str]) -> list[str]:
    log = Path(env["RAN_LOG"])
    ran = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return ran


def _run_count(project: Path) -> int:
    with sqlite3.connect(project / ".rig" / "state.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM workflow_node_runs").fetchone()[0])


def test_plan_detailed_exitcode_is_0_when_nothing_is_pending_2_when_something_is_1_on_error(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    for args in (("plan", "--detailed-exitcode"), ("--json", "plan", "--detailed-exitcode")):
        pending = run_rig(*args, cwd=project, env=env, subprocess=True)
        assert pending.returncode == 2, pending
    assert run_rig("--json", "plan", "--detailed-exitcode", cwd=project, env=env).json["node_count"] == 4
    assert run_rig("plan", cwd=project, env=env, subprocess=True).returncode == 0  # without it: 0 as before

    assert run_rig("apply", cwd=project, env=env).returncode == 0
    for args in (("plan", "--detailed-exitcode"), ("--json", "plan", "--detailed-exitcode")):
        cached = run_rig(*args, cwd=project, env=env, subprocess=True)
        assert cached.returncode == 0, cached

    # An error is 1, also one that is usually a usage error (2) and would read as "pending".
    (project / "rig_config.py").write_text(CONFIG + "\nraise SystemExit('nope')\n")
    broken = run_rig("plan", "--detailed-exitcode", cwd=project, env=env, subprocess=True)
    assert broken.returncode == 1 and broken.error_lines, broken
    (project / "rig_config.py").write_text(CONFIG + "\nworkflows = [workflows, sequence('other')]\n")
    ambiguous = run_rig("plan", "--detailed-exitcode", cwd=project, env=env, subprocess=True)
    assert ambiguous.returncode == 1 and "pass --workflow" in ambiguous.stderr, ambiguous
    assert run_rig("plan", cwd=project, env=env, subprocess=True).returncode == 2  # unchanged without the flag


def test_apply_expect_cached_runs_nothing_and_exits_5_naming_what_is_pending(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    assert run_rig("apply", cwd=project, env=env).returncode == 0
    _ran(env)
    assert run_rig("apply", "--expect-cached", cwd=project, env=env, subprocess=True).returncode == 0
    assert _ran(env) == []

    runs = _run_count(project)
    gated = run_rig("apply", "--expect-cached", cwd=project, env={**env, "BASE_VERSION": "2"}, subprocess=True)
    assert gated.returncode == 5, gated
    assert gated.error_lines == [
        "error: --expect-cached: 4 tasks are pending, nothing ran: base (task-changed: version changed), "
        "left.build (upstream-pending: upstream output is pending), "
        "right.lint (upstream-pending: upstream output is pending), "
        "deploy (upstream-pending: upstream output is pending)"
    ]
    assert gated.stdout == ""
    assert _ran(env) == [] and _run_count(project) == runs  # nothing ran, nothing was recorded

    as_json = run_rig(
        "--json", "apply", "--expect-cached", cwd=project, env={**env, "BASE_VERSION": "2"}, subprocess=True
    )
    assert as_json.returncode == 5 and len(as_json.error_lines) == 1, as_json
    document = as_json.json
    assert document["workflow"] == "w"
    assert document["pending"][0] == {
        "path": "base",
        "reason": {"code": "task-changed", "message": "version changed", "component": "version"},
    }
    assert [item["path"] for item in document["pending"]] == ["base", "left.build", "right.lint", "deploy"]
    assert document["plan"]["cached_node_count"] == 0 and len(document["plan"]["nodes"]) == 4
    assert _ran(env) == [] and _run_count(project) == runs


def test_apply_only_runs_the_task_and_its_pending_upstream_and_nothing_downstream(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    applied = run_rig("apply", "--only", "build", cwd=project, env=env, subprocess=True)
    assert applied.returncode == 0, applied
    assert _ran(env) == ["base", "build"]  # not the sibling branch, not deploy
    assert "skipped because of --only: right.lint, deploy" in applied.stderr
    assert "ran 2, cached 0, skipped 2" in applied.stderr
    statuses = {node["path"]: node["status"] for node in run_rig("--json", "plan", cwd=project, env=env).json["nodes"]}
    assert statuses == {"base": "cached", "left.build": "cached", "right.lint": "pending", "deploy": "pending"}

    # Several tasks (each spelling), by name or path; cached upstream is reused, not run again.
    as_json = run_rig("--json", "apply", "--only", "right.lint", "--only", "deploy", cwd=project, env=env)
    assert as_json.returncode == 0, as_json
    assert _ran(env) == ["lint", "deploy"]
    assert (as_json.json["only"], as_json.json["skipped"]) == (["right.lint", "deploy"], [])

    changed = {**env, "BASE_VERSION": "2"}
    as_json = run_rig("--json", "apply", "--only", "build", "lint", cwd=project, env=changed, subprocess=True)
    assert as_json.returncode == 0, as_json
    assert sorted(_ran(env)) == ["base", "build", "lint"]
    assert (as_json.json["only"], as_json.json["skipped"]) == (["left.build", "right.lint"], ["deploy"])

    assert run_rig("apply", "--only", "base,deploy", cwd=project, env=changed).returncode == 0
    assert _ran(env) == ["deploy"]


def test_apply_only_refuses_an_unknown_task_before_running_anything(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    unknown = run_rig("apply", "--only", "biuld", cwd=project, env=env, subprocess=True)
    assert unknown.returncode == 1
    assert unknown.error_lines == ["error: Workflow w has no task biuld; did you mean left.build?"]
    assert _ran(env) == []
    stray = run_rig("apply", "build", cwd=project, env=env, subprocess=True)
    assert stray.returncode == 2 and "rig apply --only TASK" in stray.stderr, stray
    assert _ran(env) == []
