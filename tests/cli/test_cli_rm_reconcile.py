"""`rig rm` reconciles from the effects journal in any record state; uncertain answers keep the record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig, write_project

LOCAL_CONFIG = """
import os
import signal
import time
from pathlib import Path

from rigcli import define_provider, workflow

HERE = Path(__file__).parent
app = workflow("dev", providers={"box": define_provider("local")})


def prepare(step, box):
    machine = box.create_machine()
    try:
        machine.write_text("base.txt", "base")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, workspace, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    if (HERE / "die-in-create").exists():
        os.kill(os.getpid(), signal.SIGKILL)  # a fork killed mid-create (kill -9, a closed terminal)
    return {"machine": machine.id}


def remove(workspace, box):
    (HERE / "marks").mkdir(exist_ok=True)
    (HERE / "marks" / f"remove-{os.getpid()}").write_text(json.dumps(dict(workspace.ctx)))
    time.sleep(float(os.environ.get("RIG_TEST_REMOVE_SLEEP", "0")))
    if (HERE / "fail-remove").exists():
        raise RuntimeError("the remove hook failed")
    box.delete_machine(workspace.ctx["machine"])


import json  # noqa: E402

workflows = app.sequence("dev").task("prepare", prepare).workspace(create=create, remove=remove)
"""

# A provider whose daemon can be "down": removal then cannot tell whether the resource is gone.
FLAKY_CONFIG = """
from pathlib import Path

from rigcli import define_provider, workflow
from rigcli.errors import ProviderError

HERE = Path(__file__).parent
THINGS = HERE / "things"


class Runtime:
    def __init__(self, context):
        self.context = context

    def make(self):
        effect_id = self.context.effects.requested("thing", {"path": "things"})
        THINGS.mkdir(exist_ok=True)
        (THINGS / effect_id).write_text("made by rig")
        self.context.effects.confirmed(effect_id)
        return effect_id


class Controller:
    provider_id = "flaky"

    def runtime(self, context):
        return Runtime(context)

    def remove_effect(self, effect):
        if (HERE / "daemon-down").exists():
            raise ProviderError("the flaky daemon is unreachable")
        target = THINGS / effect["id"]
        existed = target.exists()
        target.unlink(missing_ok=True)
        return existed

    def find_effects(self):
        names = sorted(path.name for path in THINGS.iterdir()) if THINGS.is_dir() else []
        return [{"id": name, "kind": "thing", "resource": {}} for name in names if name.startswith("thing-")]


class Plugin:
    provider_id = "flaky"

    def create_provider(self, setup):
        return Controller()


app = workflow("dev", providers={"flaky": define_provider("flaky", plugin=Plugin())})


def create(workspace, flaky):
    made = flaky.make()
    if (HERE / "fail-create").exists():
        raise RuntimeError("create broke after making " + made)
    return {"thing": made}


def remove(workspace, flaky):
    pass


workflows = app.sequence("dev").task("ready", lambda step: None).workspace(create=create, remove=remove)
"""


def _machines(project: Path) -> list[str]:
    folder = project / ".rig" / "machines"
    return sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []


def _workspaces(project: Path) -> dict[str, dict[str, object]]:
    listed = run_rig("--json", "ls", cwd=project)
    assert listed.returncode == 0, listed
    return {ws["name"]: ws for wf in listed.json["workflows"] for ws in wf["workspaces"]}


def _marks(project: Path) -> list[str]:
    folder = project / "marks"
    return sorted(path.read_text() for path in folder.iterdir()) if folder.is_dir() else []


def _fork_killed_mid_create(project: Path) -> None:
    (project / "die-in-create").touch()
    killed = subprocess.run([RIG, "fork", "dev"], cwd=project, env=env_with_rig(), capture_output=True, timeout=120)
    assert killed.returncode == -9, killed
    (project / "die-in-create").unlink()


def test_a_fork_killed_mid_create_is_removed_from_the_journal_without_the_remove_hook(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", LOCAL_CONFIG)
    assert run_rig("apply", cwd=project).returncode == 0
    _fork_killed_mid_create(project)
    assert _workspaces(project)["dev"]["status"] == "creating"
    assert len(_machines(project)) == 1  # journaled before it was made: rm knows it

    removed = run_rig("rm", "dev", "--yes", cwd=project)

    assert removed.returncode == 0, removed
    assert _marks(project) == []  # create never completed: the user's hook has nothing to work with
    assert _machines(project) == []
    assert _workspaces(project) == {}


def test_a_ready_workspace_runs_its_remove_hook_once_and_leaves_nothing(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", LOCAL_CONFIG)
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    [machine] = _machines(project)

    assert run_rig("rm", "dev", "--yes", cwd=project).returncode == 0

    assert [json.loads(mark) for mark in _marks(project)] == [{"machine": machine}]
    assert _machines(project) == []


def test_a_failed_remove_keeps_the_record_with_the_reason_and_a_retry_succeeds(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", LOCAL_CONFIG)
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    (project / "fail-remove").touch()

    failed = run_rig("rm", "dev", "--yes", cwd=project)
    assert failed.returncode == 1, failed
    assert len(failed.error_lines) == 1 and "the remove hook failed" in failed.error_lines[0], failed
    assert "record is kept" in failed.error_lines[0]
    record = _workspaces(project)["dev"]
    assert record["status"] == "removing" and "the remove hook failed" in str(record["error"])

    (project / "fail-remove").unlink()
    assert run_rig("rm", "dev", "--yes", cwd=project).returncode == 0
    assert _machines(project) == [] and _workspaces(project) == {}


def test_force_forgets_a_workspace_whose_remove_hook_fails_after_cleaning_its_journal(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", LOCAL_CONFIG)
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    (project / "fail-remove").touch()

    forced = run_rig("rm", "dev", "--yes", "--force", cwd=project)

    assert forced.returncode == 0, forced
    assert "the remove hook failed" in forced.stderr and "--force" in forced.stderr
    assert _workspaces(project) == {}
    assert _machines(project) == []  # journaled for the workspace: removed even though the hook was not


def test_missing_ok_makes_removing_an_unknown_workspace_a_success(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", LOCAL_CONFIG)
    unknown = run_rig("rm", "nope", "--yes", cwd=project)
    assert unknown.returncode == 1 and unknown.error_lines == ['error: Unknown workspace "nope"'], unknown

    ok = run_rig("rm", "nope", "--yes", "--missing-ok", cwd=project)
    assert (ok.returncode, ok.stdout, ok.error_lines) == (0, "", [])
    assert run_rig("--json", "rm", "nope", "--yes", "--missing-ok", cwd=project).stdout == "null\n"


def test_two_concurrent_rm_of_one_workspace_run_the_hook_once(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", LOCAL_CONFIG)
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    env = env_with_rig({"RIG_TEST_REMOVE_SLEEP": "1"})
    racers = [
        subprocess.Popen(
            [RIG, "rm", "dev", "--yes", "--missing-ok"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    results = [racer.communicate(timeout=120) for racer in racers]

    assert [racer.returncode for racer in racers] == [0, 0], results
    assert len(_marks(project)) == 1
    assert _machines(project) == [] and _workspaces(project) == {}


def _flaky_failed_fork(tmp_path: Path) -> tuple[Path, str]:
    project = write_project(tmp_path / "project", FLAKY_CONFIG)
    (project / "fail-create").touch()
    failed = run_rig("fork", "dev", cwd=project)
    assert failed.returncode == 1, failed
    [thing] = sorted(path.name for path in (project / "things").iterdir())
    (project / "daemon-down").touch()
    return project, thing


def test_an_uncertain_answer_is_never_taken_as_gone(tmp_path: Path) -> None:
    project, thing = _flaky_failed_fork(tmp_path)

    uncertain: Result = run_rig("rm", "dev", "--yes", cwd=project)

    assert uncertain.returncode == 1, uncertain
    [line] = uncertain.error_lines
    assert "the flaky daemon is unreachable" in line and "record is kept" in line and thing in line
    record = _workspaces(project)["dev"]
    assert record["status"] == "failed" and "unreachable" in str(record["error"])
    assert (project / "things" / thing).exists()

    (project / "daemon-down").unlink()  # the daemon is back: the retry finishes the job
    assert run_rig("rm", "dev", "--yes", cwd=project).returncode == 0
    assert not (project / "things" / thing).exists()
    assert _workspaces(project) == {}


def test_force_with_an_uncertain_answer_forgets_the_record_and_leaves_the_effect_to_gc(tmp_path: Path) -> None:
    project, thing = _flaky_failed_fork(tmp_path)

    forced = run_rig("rm", "dev", "--yes", "--force", cwd=project)

    assert forced.returncode == 0, forced
    assert "rig gc" in forced.stderr and "unreachable" in forced.stderr
    assert _workspaces(project) == {}
    assert (project / "things" / thing).exists()  # still journaled: rig gc removes it later
