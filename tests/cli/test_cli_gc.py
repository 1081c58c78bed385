"""`rig gc` deletes what rig made and nothing live refers to, and never anything rig did not make."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig, kill_apply_after, run_rig, write_project
from tests.cli.test_cli_rm_reconcile import FLAKY_CONFIG

CONFIG = """
import time
from pathlib import Path

from rigcli import define_provider, workflow

app = workflow("dev", providers={"box": define_provider("local")})


def build(step, box):
    machine = box.create_machine()  # never deleted: garbage once the run is over
    machine.write_text("tool", "v1")
    if (Path(__file__).parent / "hang").exists():
        print("built", flush=True)
        time.sleep(60)
    return {"ctx": {"base": machine.snapshot_ref()}}


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("dev").task("build", build).workspace(create=create, remove=remove)
"""


def _names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []


def _gc(project: Path, *args: str) -> dict[str, list[dict[str, object]]]:
    result = run_rig("--json", "gc", *args, cwd=project)
    assert result.returncode == 0, result
    document: dict[str, list[dict[str, object]]] = result.json
    return document


def _removed(document: dict[str, list[dict[str, object]]]) -> list[str]:
    return sorted(str(item["id"]) for item in document["removed"])


def test_the_init_starter_leaves_no_build_machine_behind(tmp_path: Path) -> None:
    assert run_rig("init", cwd=tmp_path).returncode == 0
    for _ in range(2):
        assert run_rig("apply", cwd=tmp_path).returncode == 0
        assert _names(tmp_path / ".rig" / "machines") == []
        assert run_rig("cache", "invalidate", "prepare", cwd=tmp_path).returncode == 0
    assert run_rig("apply", cwd=tmp_path).returncode == 0
    # Only the snapshot of the live cache entry is referred to; the superseded ones are garbage.
    live = run_rig("--json", "plan", cwd=tmp_path).json["final_context"]["base"]["snapshot_id"]
    assert len(_names(tmp_path / ".rig" / "snapshots")) == 3
    assert live not in _removed(_gc(tmp_path))
    assert _names(tmp_path / ".rig" / "snapshots") == [live]


def test_gc_removes_what_nothing_refers_to_and_keeps_everything_else(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    rig_dir = project / ".rig"
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    [first_snapshot] = _names(rig_dir / "snapshots")
    machines_after_fork = _names(rig_dir / "machines")
    [workflow] = run_rig("--json", "ls", cwd=project).json["workflows"]
    workspace_machine = workflow["workspaces"][0]["ctx"]["machine"]
    # Superseded: invalidate and rebuild, so the first snapshot belongs to no live cache entry.
    assert run_rig("cache", "invalidate", "build", cwd=project).returncode == 0
    assert run_rig("apply", cwd=project).returncode == 0
    [second_snapshot] = [s for s in _names(rig_dir / "snapshots") if s != first_snapshot]
    half_copied = rig_dir / "machines" / ".tmp-m-0123456789ab"  # a copy cut off by kill -9
    (half_copied / "src").mkdir(parents=True)
    foreign = [rig_dir / "machines" / "notes", rig_dir / "snapshots" / "keep-me", rig_dir / "my-stuff"]
    for path in foreign:
        path.write_text("not rig's")

    dry = _gc(project, "--dry-run")
    build_machines = [m for m in machines_after_fork if m != workspace_machine] + [
        m for m in _names(rig_dir / "machines") if m not in machines_after_fork and m.startswith("m-")
    ]
    # The first snapshot belongs to no live cache entry, but the workspace was made from it.
    expected = sorted([*build_machines, "m-0123456789ab"])
    assert _removed(dry) == expected and dry["dry_run"] is True
    assert half_copied.exists()  # a dry run deletes nothing

    assert _removed(_gc(project)) == expected
    assert _names(rig_dir / "machines") == sorted([workspace_machine, "notes"])
    assert _names(rig_dir / "snapshots") == sorted([first_snapshot, second_snapshot, "keep-me"])
    assert all(path.read_text() == "not rig's" for path in foreign)
    assert _removed(_gc(project)) == []  # nothing left to collect

    assert run_rig("rm", "dev", "--yes", cwd=project).returncode == 0
    assert _removed(_gc(project)) == [first_snapshot]  # nothing refers to it any more
    assert _names(rig_dir / "machines") == ["notes"]
    assert _names(rig_dir / "snapshots") == sorted([second_snapshot, "keep-me"])
    assert all(path.read_text() == "not rig's" for path in foreign)


def test_gc_collects_the_machine_of_a_killed_apply(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    (project / "hang").touch()
    kill_apply_after(project, "built")
    [leaked] = _names(project / ".rig" / "machines")

    assert _removed(_gc(project)) == [leaked]
    assert _names(project / ".rig" / "machines") == []


# A third-party provider built on the provider kit, as a plugin written inline: its machines are
# directories under boxes/, made with the kit's ``making`` and removed with its delete_machine.
KIT_CONFIG = """
import shutil
import subprocess
import time
from pathlib import Path

from rigcli import define_provider, workflow
from rigcli.provider_kit import BaseController, BaseMachine, BaseRuntime, exit_status

HERE = Path(__file__).parent
BOXES = HERE / "boxes"


class Box(BaseMachine["KitRuntime"]):
    provider_id = "kit"

    def _run(self, command, *, env, cwd, timeout, recorder, cancellation):
        recorder.started()
        done = subprocess.run(["sh", "-c", command], cwd=BOXES / self.id, capture_output=True, timeout=timeout)
        recorder.feed("stdout", done.stdout)
        recorder.feed("stderr", done.stderr)
        return recorder.finish(exit_status(done.returncode))

    def _remove(self):
        self._runtime.controller.delete_machine(self.id)


class KitRuntime(BaseRuntime["KitController"]):
    def create_machine(self):
        with self.making("machine") as machine_id:
            (BOXES / machine_id).mkdir(parents=True)
        return Box(self, machine_id)


class KitController(BaseController):
    provider_id = "kit"

    def runtime(self, context):
        return KitRuntime(self, context)

    def delete_machine(self, machine_id):
        if not (BOXES / machine_id).is_dir():
            return False
        shutil.rmtree(BOXES / machine_id)
        return True

    def list_machines(self):
        names = sorted(path.name for path in BOXES.iterdir()) if BOXES.is_dir() else []
        return [{"provider": "kit", "id": name} for name in names]


class KitPlugin:
    provider_id = "kit"

    def create_provider(self, setup):
        return KitController(setup)


app = workflow("kit", providers={"kit": define_provider("kit", plugin=KitPlugin())})


def build(step, kit):
    box = kit.create_machine()
    box.exec("echo tool > tool")
    if (HERE / "hang").exists():
        print("built", flush=True)
        time.sleep(60)
    return {"ctx": {"box": box.id}}


def create(workflow, kit):
    box = kit.create_machine()
    if (HERE / "fail-create").exists():
        raise RuntimeError("create broke after making " + box.id)
    return {"box": box.id}


workflows = app.sequence("kit").task("build", build).workspace(create=create)
"""


def test_a_provider_built_on_the_kit_gets_rm_and_gc_for_free(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", KIT_CONFIG)
    boxes = project / "boxes"
    foreign = boxes / "made-by-hand"  # in the provider's own folder, but not made by rig
    foreign.mkdir(parents=True)

    # A fork killed in its apply leaves the box its build task made.
    (project / "hang").touch()
    kill_apply_after(project, "built", command=("fork", "dev"))
    (project / "hang").unlink()
    [leaked] = [name for name in _names(boxes) if name != foreign.name]
    assert (boxes / leaked / "tool").read_text() == "tool\n"
    assert _removed(_gc(project)) == [leaked]
    assert _names(boxes) == [foreign.name]

    # A live cache entry keeps its box; once invalidated, gc collects it.
    applied = run_rig("--json", "apply", cwd=project)
    assert applied.returncode == 0, applied
    built = applied.json["context"]["box"]
    assert _removed(_gc(project)) == []
    assert run_rig("cache", "invalidate", "build", cwd=project).returncode == 0
    assert _removed(_gc(project)) == [built]
    assert _names(boxes) == [foreign.name]

    # A failed create's box is on its record (from the journal) and rm removes it.
    (project / "fail-create").touch()
    assert run_rig("fork", "dev", cwd=project).returncode == 1
    [workflow] = run_rig("--json", "ls", cwd=project).json["workflows"]
    [record] = workflow["workspaces"]
    [made] = [item["effect_id"] for item in record["resources"] if item["kind"] == "machine"]
    assert (boxes / made).is_dir()
    assert run_rig("rm", "dev", "--yes", cwd=project).returncode == 0
    assert not (boxes / made).exists()
    rebuilt = run_rig("--json", "plan", cwd=project).json["final_context"]["box"]  # the fork's apply made it
    assert _names(boxes) == sorted([foreign.name, rebuilt])
    assert _removed(_gc(project)) == []  # it is the live cache entry's


def test_cache_clear_and_invalidate_collect_what_they_orphan_with_gc(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    assert run_rig("apply", cwd=project).returncode == 0
    [snapshot] = _names(project / ".rig" / "snapshots")
    [machine] = _names(project / ".rig" / "machines")

    invalidated = run_rig("--json", "cache", "invalidate", "build", "--gc", cwd=project)
    assert invalidated.returncode == 0, invalidated
    assert invalidated.json["invalidated"] == 1
    assert sorted(item["id"] for item in invalidated.json["gc"]["removed"]) == sorted([machine, snapshot])

    assert run_rig("apply", cwd=project).returncode == 0
    cleared = run_rig("--json", "cache", "clear", "--yes", "--gc", cwd=project)
    assert cleared.returncode == 0, cleared
    assert cleared.json["deleted"] == 2
    assert len(cleared.json["gc"]["removed"]) == 2
    assert _names(project / ".rig" / "snapshots") == [] and _names(project / ".rig" / "machines") == []

    # Without --gc and without a terminal, nothing is collected and the JSON is as before.
    assert run_rig("apply", cwd=project).returncode == 0
    assert run_rig("--json", "cache", "clear", "--yes", cwd=project).json == {"deleted": 1}
    assert len(_names(project / ".rig" / "snapshots")) == 1


def test_gc_never_takes_an_uncertain_answer_as_gone(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", FLAKY_CONFIG)
    (project / "fail-create").touch()
    assert run_rig("fork", "dev", cwd=project).returncode == 1
    [thing] = _names(project / "things")
    (project / "daemon-down").touch()
    assert run_rig("rm", "dev", "--yes", "--force", cwd=project).returncode == 0  # forgets the record only

    uncertain = run_rig("--json", "gc", cwd=project)
    assert uncertain.returncode == 1, uncertain
    # The JSON report is printed even so (issue 17): the uncertain removal is in "failed", nothing removed.
    assert uncertain.json["removed"] == [], uncertain
    [failed] = uncertain.json["failed"]
    assert thing in (failed["id"], *failed["resource"].values()) and "unreachable" in failed["reason"]
    [line] = uncertain.error_lines
    assert thing in line and "unreachable" in line
    assert (project / "things" / thing).exists()

    (project / "daemon-down").unlink()
    assert _removed(_gc(project)) == [thing]
    assert _names(project / "things") == []


def test_in_a_terminal_cache_invalidate_offers_to_collect_what_it_orphaned(tmp_path: Path) -> None:
    import pexpect

    project = write_project(tmp_path / "project", CONFIG)
    assert run_rig("apply", cwd=project).returncode == 0
    child = pexpect.spawn(
        RIG,
        ["cache", "invalidate", "build"],
        cwd=str(project),
        env=env_with_rig({"TERM": "xterm"}),
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=60,
    )
    child.expect(r"Also delete the 2 machines and snapshots nothing refers to any more \(rig gc\)\?")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert _names(project / ".rig" / "snapshots") == [] and _names(project / ".rig" / "machines") == []
