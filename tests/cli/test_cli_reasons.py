"""DESIGN §11's reasons through the installed rig: the codes for runs that left no result, and a
``task-changed``/``provider-changed`` that names the component that changed (never a secret)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project

# Each part of a task's fingerprint can be changed on its own through the environment.
COMPONENTS_CONFIG = """
import os

from pydantic import BaseModel

from rigcli import define_provider, secret, sequence
from tools import install_pkgs


class Out(BaseModel):
    v: str
    if os.environ.get("OUT_EXTRA"):
        extra: int = 0


class Plugin:
    provider_id = "box"

    def create_provider(self, setup):
        class Controller:
            provider_id = "box"

            def checks(self, mode, **_):
                return [{"id": "login", "status": "ok", "fingerprint": os.environ.get("BOX_LOGIN", "alice")}]

            def runtime(self, context):
                return {}

        return Controller()


box = define_provider("box", plugin=Plugin(), region=os.environ.get("BOX_REGION", "eu"), token=secret("BOX_TOKEN"))

workflows = (
    sequence("w")
    .add_provider("box", box)
    .configure(python=os.environ.get("PYTHON", "3.12"), **({"extra": 1} if os.environ.get("EXTRA_KEY") else {}))
    .task("install", install_pkgs, output=Out, version=os.environ.get("VERSION", "1"))
)
"""

TOOLS = """
import os

PIN = os.environ.get("PIN", "1")


class Pkg:
    def name(self):
        return "pkg"


def _pin(value):
    return value + PIN


def install_pkgs(step, config, box):
    return {"ctx": {"v": _pin(Pkg().name() + config["python"])}}
"""

BASE_ENV = {"BOX_TOKEN": "s3cr3t-token-value"}


def _project(tmp_path: Path) -> Path:
    project = write_project(tmp_path / "components", COMPONENTS_CONFIG, **{"tools.py": TOOLS})
    applied = run_rig("apply", cwd=project, env=BASE_ENV)
    assert applied.returncode == 0, applied
    return project


def _reason(project: Path, env: dict[str, str]) -> dict[str, Any]:
    plan = run_rig("--json", "plan", cwd=project, env={**BASE_ENV, **env})
    assert plan.returncode == 0, plan
    [node] = plan.json["nodes"]
    assert node["status"] == "pending", node
    reason: dict[str, Any] = node["reason"]
    return reason


@pytest.mark.parametrize(
    ("env", "code", "component", "message"),
    [
        ({"PYTHON": "3.13"}, "task-changed", 'config key "python"', 'config key "python" changed'),
        ({"EXTRA_KEY": "1"}, "task-changed", 'config key "extra"', 'config key "extra" added'),
        ({"PIN": "2"}, "task-changed", "global PIN (tools.py)", "global PIN (tools.py) changed"),
        ({"OUT_EXTRA": "1"}, "task-changed", "output schema", "output schema changed"),
        ({"VERSION": "2"}, "task-changed", "version", "version changed"),
        ({"BOX_REGION": "us"}, "provider-changed", 'provider "box"', 'provider "box" config changed'),
        ({"BOX_TOKEN": "another-secret-value"}, "provider-changed", 'provider "box"', 'provider "box" config changed'),
        ({"BOX_LOGIN": "bob"}, "provider-changed", 'provider "box" checks', 'provider "box" checks changed'),
    ],
)
def test_a_change_is_named_by_its_component(
    tmp_path: Path, env: dict[str, str], code: str, component: str, message: str
) -> None:
    project = _project(tmp_path)
    reason = _reason(project, env)
    assert (reason["code"], reason["component"], reason["message"]) == (code, component, message)
    human = run_rig("plan", cwd=project, env={**BASE_ENV, **env})
    assert message in human.stdout
    explain = run_rig("--json", "cache", "explain", cwd=project, env={**BASE_ENV, **env}).json
    assert explain["explanations"][0]["reason"]["component"] == component
    for value in (*env.values(), *BASE_ENV.values()):  # only names: never a value, secret or not
        if len(value) > 4:
            assert value not in human.stdout + str(reason) + str(explain)


def test_an_edited_handler_and_an_edited_helper_are_named(tmp_path: Path) -> None:
    project = _project(tmp_path)
    tools = project / "tools.py"
    tools.write_text(TOOLS.replace("return value + PIN", "return value + PIN + '.'"), encoding="utf-8")
    reason = _reason(project, {})
    assert (reason["component"], reason["message"]) == ("helper _pin()", "helper _pin() changed")

    tools.write_text(TOOLS.replace('{"v": _pin(', '{"v": "x" + _pin('), encoding="utf-8")
    reason = _reason(project, {})
    assert (reason["component"], reason["message"]) == (
        "handler install_pkgs (tools.py)",
        "handler install_pkgs (tools.py) changed",
    )

    tools.write_text(TOOLS.replace('return "pkg"', 'return "package"'), encoding="utf-8")
    reason = _reason(project, {})
    assert (reason["component"], reason["message"]) == ("class Pkg (tools.py)", "class Pkg (tools.py) changed")

    # Reformatting and comments change nothing: the task stays cached.
    tools.write_text("# tools\n" + TOOLS.replace("return value + PIN", "return (value  +  PIN)  # pinned"))
    plan = run_rig("--json", "plan", cwd=project, env=BASE_ENV)
    assert plan.json["nodes"][0]["reason"]["code"] == "cached"


def test_several_changes_name_the_first_and_count_the_rest(tmp_path: Path) -> None:
    project = _project(tmp_path)
    reason = _reason(project, {"PYTHON": "3.13", "VERSION": "2"})
    assert reason["message"] == 'config key "python" changed (and 1 more)'
    assert reason["detail"] == 'config key "python" changed; version changed'


def test_a_run_recorded_before_parts_were_stored_keeps_the_general_message(tmp_path: Path) -> None:
    project = _project(tmp_path)
    import sqlite3

    with sqlite3.connect(project / ".rig" / "state.sqlite") as db:
        db.execute("DELETE FROM fingerprint_parts")
    reason = _reason(project, {"PYTHON": "3.13"})
    assert reason == {"code": "task-changed", "message": "task definition changed"}


FLAKY_CONFIG = """
import os
import time

from rigcli import sequence


def flaky(step):
    if os.environ.get("FAIL"):
        raise KeyError("missing")
    if os.environ.get("WAIT"):
        print("waiting", flush=True)
        time.sleep(float(os.environ["WAIT"]))
    return {"ctx": {"ok": True}}


workflows = (
    sequence("w").task("flaky", flaky, version=os.environ.get("VERSION", "1")).task("after", lambda step: None)
)
"""


def test_a_task_whose_last_run_failed_is_pending_because_it_failed(tmp_path: Path) -> None:
    project = write_project(tmp_path / "flaky", FLAKY_CONFIG)
    assert run_rig("apply", cwd=project, env={"FAIL": "1"}).returncode == 1
    reason = _reason_of(project, "flaky")
    assert (reason["code"], reason["message"]) == ("previous-run-failed", "the previous run failed")
    assert "KeyError: 'missing'" in reason["detail"]
    assert "the previous run failed" in run_rig("plan", cwd=project).stdout
    explain = run_rig("--json", "cache", "explain", "flaky", cwd=project).json
    assert explain["explanations"][0]["reason"]["code"] == "previous-run-failed"

    # A success after it is what counts from then on.
    assert run_rig("apply", cwd=project).returncode == 0
    assert _reason_of(project, "flaky")["code"] == "cached"


def test_after_cache_invalidate_the_reason_is_invalidated_not_an_older_failure(tmp_path: Path) -> None:
    project = write_project(tmp_path / "flaky", FLAKY_CONFIG)
    assert run_rig("apply", cwd=project).returncode == 0
    # Another version of the handler failed after that success; back on the first one, it is cached.
    assert run_rig("apply", cwd=project, env={"FAIL": "1", "VERSION": "2"}).returncode == 1
    assert _reason_of(project, "flaky")["code"] == "cached"

    invalidated = run_rig("cache", "invalidate", "flaky", "--yes", cwd=project, subprocess=True)
    assert invalidated.returncode == 0, invalidated
    reason = _reason_of(project, "flaky")
    assert (reason["code"], reason["message"]) == ("invalidated", "cache entry was invalidated"), reason
    plan = run_rig("plan", cwd=project, subprocess=True)
    assert "invalidated" in plan.stdout and "failed" not in plan.stdout, plan
    explain = run_rig("--json", "cache", "explain", "flaky", cwd=project, subprocess=True).json
    assert explain["explanations"][0]["reason"]["code"] == "invalidated"

    # A failure after the invalidation is news again.
    assert run_rig("apply", cwd=project, env={"FAIL": "1"}).returncode == 1
    assert _reason_of(project, "flaky")["code"] == "previous-run-failed"


def test_a_task_whose_last_run_was_interrupted_says_so(tmp_path: Path) -> None:
    project = write_project(tmp_path / "flaky", FLAKY_CONFIG)
    process = _start_apply(project, {"WAIT": "60"})
    try:
        _wait_for_marker(process, "waiting")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
    finally:
        _stop(process)
    reason = _reason_of(project, "flaky")
    assert (reason["code"], reason["message"]) == ("previous-run-interrupted", "the previous run was interrupted")
    assert "cache entry was invalidated" not in run_rig("plan", cwd=project).stdout


def test_a_task_another_rig_is_running_now_names_that_rig(tmp_path: Path) -> None:
    project = write_project(tmp_path / "flaky", FLAKY_CONFIG)
    process = _start_apply(project, {"WAIT": "60"})
    try:
        _wait_for_marker(process, "waiting")
        reason = _reason_of(project, "flaky")
        assert reason["code"] == "running-elsewhere", reason
        assert reason["message"].startswith(f"another rig is running it now: rig apply (pid {process.pid} on ")
        human = run_rig("plan", cwd=project)
        assert f"rig apply (pid {process.pid}" in human.stdout
        assert "no previous run" not in human.stdout
        [entry] = run_rig("--json", "cache", "ls", cwd=project).json["entries"]
        assert entry["status"] == "running"
    finally:
        _stop(process)


def test_a_killed_run_is_closed_abandoned_with_its_evidence_by_the_recovery_apply(tmp_path: Path) -> None:
    """Issue 17, defect 13: the old row no longer stays ``running`` (and ``in-doubt``) for ever."""
    project = write_project(tmp_path / "flaky", FLAKY_CONFIG)
    process = _start_apply(project, {"WAIT": "60"})
    killed_pid = process.pid
    try:
        _wait_for_marker(process, "waiting")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        _stop(process)
    [entry] = run_rig("--json", "cache", "ls", cwd=project).json["entries"]
    assert entry["status"] == "in-doubt"
    old_run = entry["run_id"]
    reason = _reason_of(project, "flaky")
    assert reason["code"] == "in-doubt" and f"rig pid {killed_pid} on " in reason["detail"], reason

    assert run_rig("apply", cwd=project, subprocess=True).returncode == 0
    entries = run_rig("--json", "cache", "ls", cwd=project).json["entries"]
    assert [entry["status"] for entry in entries] == ["cached", "cached"]
    assert old_run not in {entry["run_id"] for entry in entries}
    [(status, error, finished_at)] = _rows(
        project, "SELECT status, error, finished_at FROM workflow_node_runs WHERE id = ?", old_run
    )
    [(new_run, new_created)] = _rows(
        project,
        "SELECT id, created_at FROM workflow_node_runs WHERE node_path = 'flaky' AND status = 'succeeded'",
    )
    assert status == "abandoned"
    assert error == f"rig pid {killed_pid} on {os.uname().nodename} has exited; superseded by run {new_run}"
    assert finished_at == new_created  # written in the transaction that started the new run


def test_a_killed_run_of_a_node_that_is_cached_anyway_is_closed_by_the_next_apply(tmp_path: Path) -> None:
    project = write_project(tmp_path / "flaky", FLAKY_CONFIG)
    assert run_rig("apply", cwd=project).returncode == 0
    process = _start_apply(project, {"WAIT": "60", "VERSION": "2"})  # killed while running version 2
    try:
        _wait_for_marker(process, "waiting")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        _stop(process)
    statuses = [entry["status"] for entry in run_rig("--json", "cache", "ls", cwd=project).json["entries"]]
    assert sorted(statuses) == ["cached", "cached", "in-doubt"]

    # Back on version 1: its run is reused, nothing runs again, and the killed run is closed.
    applied = run_rig("--json", "apply", cwd=project, subprocess=True)
    assert applied.returncode == 0, applied
    assert [node["status"] for node in applied.json["plan"]["nodes"]] == ["cached", "cached"]
    statuses = [entry["status"] for entry in run_rig("--json", "cache", "ls", cwd=project).json["entries"]]
    assert statuses == ["cached", "cached"]
    [(status, error)] = _rows(project, "SELECT status, error FROM workflow_node_runs WHERE status != 'succeeded'")
    assert status == "abandoned"
    assert error.startswith(f"rig pid {process.pid} on ") and error.endswith(" has exited")


def _reason_of(project: Path, path: str) -> dict[str, Any]:
    plan = run_rig("--json", "plan", cwd=project)
    assert plan.returncode == 0, plan
    [node] = [node for node in plan.json["nodes"] if node["path"] == path]
    reason: dict[str, Any] = node["reason"]
    return reason


def _rows(project: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(project / ".rig" / "state.sqlite") as db:
        return list(db.execute(sql, params))


def _start_apply(project: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [RIG, "apply"],
        cwd=project,
        env=env_with_rig({"RIG_RENDER": "0", **env}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for_marker(process: subprocess.Popen[str], marker: str, timeout: float = 60) -> None:
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    for line in process.stderr:
        if marker in line:
            return
        assert time.monotonic() < deadline, f"no {marker!r} from rig apply"
    raise AssertionError(f"rig apply ended without printing {marker!r}")


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
