"""Local machines and snapshots: files, immutable copies, validation, records across processes, deletion."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness

from providers.local import plugin
from providers.local.machine import snapshot_id_of
from rigcli.errors import ProviderError
from rigcli.provider_api import EffectEntry
from rigcli.provider_kit.machine import MachineFileNotFoundError


def test_a_machine_is_a_directory_under_the_project_state_dir(local: Harness, project: Path) -> None:
    machine = local.runtime.create_machine()
    assert Path(machine.path) == project / ".rig" / "machines" / machine.id
    assert Path(machine.path).is_dir()
    assert local.of_type("machine.created")[0]["machine"] == machine.id


def test_files_are_relative_to_the_machine_dir(local: Harness) -> None:
    machine = local.runtime.create_machine()
    machine.write_text("src/app.py", "print('hi')\n")
    assert (Path(machine.path) / "src" / "app.py").read_text() == "print('hi')\n"
    assert machine.exists("src/app.py") and not machine.exists("missing.txt")
    assert machine.read_text("src/app.py") == "print('hi')\n"
    with pytest.raises(MachineFileNotFoundError, match=r"missing\.txt"):
        machine.read_text("missing.txt")


def test_snapshot_is_an_immutable_copy_that_new_machines_start_from(local: Harness, project: Path) -> None:
    machine = local.runtime.create_machine()
    machine.write_text("repo/README", "v1\n")
    os.symlink("repo/README", Path(machine.path) / "link")
    ref = machine.snapshot_ref()
    assert ref == {"provider": "local", "kind": "dirSnapshot", "snapshot_id": ref["snapshot_id"]}
    assert local.controller.validate_artifact(ref) is True
    machine.write_text("repo/README", "changed after the snapshot\n")

    fork = local.runtime.from_snapshot(ref)
    assert fork.id != machine.id and fork.source_snapshot == ref["snapshot_id"]
    assert fork.read_text("repo/README") == "v1\n"
    assert os.readlink(Path(fork.path) / "link") == "repo/README"
    fork.write_text("repo/README", "changed in the fork\n")
    assert local.runtime.from_snapshot(ref).read_text("repo/README") == "v1\n"


def test_snapshots_without_cp_fall_back_to_a_python_copy(local: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = local.runtime.create_machine()
    machine.write_text("a/b.txt", "data\n")
    os.symlink("a/b.txt", Path(machine.path) / "link")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    fork = local.runtime.from_snapshot(machine.snapshot_ref())
    assert fork.read_text("a/b.txt") == "data\n"
    assert os.readlink(Path(fork.path) / "link") == "a/b.txt"


def test_validate_artifact_needs_the_directory_and_its_completion_marker(local: Harness, project: Path) -> None:
    ref = local.runtime.create_machine().snapshot_ref()
    snapshot_dir = project / ".rig" / "snapshots" / ref["snapshot_id"]
    (snapshot_dir / "snapshot.json").unlink()
    assert local.controller.validate_artifact(ref) is False
    with pytest.raises(ProviderError, match="missing or incomplete"):
        local.runtime.from_snapshot(ref)

    other = local.runtime.create_machine().snapshot_ref()
    shutil.rmtree(project / ".rig" / "snapshots" / other["snapshot_id"])
    assert local.controller.validate_artifact(other) is False
    assert local.controller.validate_artifact({"provider": "local", "kind": "dirSnapshot"}) is False
    assert (
        local.controller.validate_artifact({"provider": "local", "kind": "dirSnapshot", "snapshot_id": "../x"}) is False
    )


def test_delete_snapshot_invalidates_it_and_lists_track_what_exists(local: Harness) -> None:
    machine = local.runtime.create_machine()
    ref = machine.snapshot_ref()
    [listed] = local.controller.list_snapshots()
    assert listed["snapshot_id"] == ref["snapshot_id"] and listed["complete"] is True
    assert listed["source_machine"] == machine.id
    assert [item["id"] for item in local.controller.list_machines()] == [machine.id]
    assert local.controller.delete_snapshot(ref) is True
    assert local.controller.validate_artifact(ref) is False
    assert local.controller.list_snapshots() == []
    assert local.controller.delete_snapshot(ref) is False


def test_from_id_works_from_a_fresh_provider_over_the_same_state(local: Harness, make_harness: Any) -> None:
    machine = local.runtime.create_machine()
    machine.write_text("hello.txt", "hi\n")
    again = make_harness(plugin).runtime.from_id(machine.id)
    assert again.path == machine.path and again.read_text("hello.txt") == "hi\n"
    with pytest.raises(ProviderError, match="Unknown local machine 'm-nope'"):
        local.runtime.from_id("m-nope")


def test_from_id_works_from_another_process(local: Harness, project: Path) -> None:
    machine = local.runtime.create_machine()
    script = (
        "import sys; from providers.local.store import LocalStore; from rigcli.state import create_state_store\n"
        "store = create_state_store(project_dir=sys.argv[1]); store.sync_schema()\n"
        "record = LocalStore(sys.argv[1] + '/.rig', store.provider_storage('local')).get_machine(sys.argv[2])\n"
        "print(record.path)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(project), machine.id], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"machines/{machine.id}"


def test_delete_removes_the_directory_and_record_and_is_idempotent(local: Harness) -> None:
    machine = local.runtime.create_machine()
    machine.write_text("x", "1")
    machine.delete()
    assert not Path(machine.path).exists()
    machine.delete()
    with pytest.raises(ProviderError, match="Unknown local machine"):
        local.runtime.from_id(machine.id)
    assert local.controller.list_machines() == []
    assert [event["machine"] for event in local.of_type("machine.deleted")] == [machine.id, machine.id]


def test_exec_in_a_deleted_machine_fails_clearly(local: Harness) -> None:
    machine = local.runtime.create_machine()
    shutil.rmtree(machine.path)
    with pytest.raises(ProviderError, match=f"Local machine {machine.id} is gone"):
        machine.exec("true")
    assert machine.probe("true").exit_code == 127


def test_the_plugin_is_registered_as_an_entry_point() -> None:
    from importlib.metadata import entry_points

    found = {entry.name: entry.value for entry in entry_points(group="rig.providers")}
    assert found.get("local") == "providers.local:plugin"
    assert found.get("docker") == "providers.docker:plugin"
    assert found.get("terminal") == "providers.terminal:plugin"


def test_delete_machine_by_id_is_safe_to_retry(local: Harness) -> None:
    machine = local.runtime.create_machine()
    assert local.runtime.delete_machine(machine.id) is True
    assert not Path(machine.path).exists()
    assert local.runtime.delete_machine(machine.id) is False


def test_remove_effect_removes_what_a_failed_workspace_create_left(local: Harness) -> None:
    machine = local.runtime.create_machine()
    ref = machine.snapshot_ref()
    journaled: list[EffectEntry] = [  # as the effects journal hands them back to rm
        {"id": machine.id, "kind": "machine", "resource": {"machine_id": machine.id}},
        {"id": snapshot_id_of(ref), "kind": "snapshot", "resource": {"snapshot_id": snapshot_id_of(ref)}},
    ]
    for effect in journaled:
        assert local.controller.remove_effect(effect) is True
        assert local.controller.remove_effect(effect) is False  # twice: a retried rm must not fail
    assert not Path(machine.path).exists()
    assert local.controller.validate_artifact(ref) is False
