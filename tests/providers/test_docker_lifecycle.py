"""Docker machines: container settings, files, commit snapshots and removal, checked with the daemon itself."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness

from providers.docker import execution, plugin
from rigcli.errors import ProviderError
from rigcli.provider_api import EffectEntry
from rigcli.provider_kit.machine import MachineFileNotFoundError


def inspect(api: Any, container: str) -> Any:
    return api.get(f"/containers/{container}/json")


def test_a_machine_is_a_running_isolated_container(docker: Harness, docker_daemon: Any, project: Path) -> None:
    machine = docker.runtime.create_machine()
    info = inspect(docker_daemon.api, machine.container_id).json()
    assert info["State"]["Running"] is True
    assert info["HostConfig"]["NetworkMode"] == "none"
    assert info["HostConfig"]["Init"] is True
    assert info["Config"]["Labels"]["rig.project"] == str(project)
    assert info["Config"]["Labels"]["rig.machine"] == machine.id
    assert "rig.workspace" not in info["Config"]["Labels"]
    assert info["Name"] == f"/{machine.id}"
    assert machine.exec("ls /sys/class/net").stdout.split() == ["lo"]


def test_the_workspace_label_is_set_when_known(docker_daemon: Any, make_harness: Any, docker: Harness) -> None:
    harness = make_harness(plugin, {"image": docker_daemon.image}, workspace="dev")
    machine = harness.runtime.create_machine()
    labels = inspect(docker_daemon.api, machine.container_id).json()["Config"]["Labels"]
    assert labels["rig.workspace"] == "dev"


def test_files_move_through_the_archive_api(docker: Harness) -> None:
    machine = docker.runtime.create_machine()
    machine.write_text("deep/nested/file.txt", "héllo\n")
    assert machine.exec("cat /workspace/deep/nested/file.txt").stdout == "héllo\n"
    assert machine.exists("deep/nested/file.txt") and not machine.exists("nope")
    assert machine.read_text("/workspace/deep/nested/file.txt") == "héllo\n"
    with pytest.raises(MachineFileNotFoundError, match="nope"):
        machine.read_text("nope")
    with pytest.raises(ProviderError, match="not a regular file"):
        machine.read_text("deep")


def test_snapshot_commit_fork_and_delete(docker: Harness, docker_daemon: Any) -> None:
    api = docker_daemon.api
    machine = docker.runtime.create_machine()
    machine.exec("mkdir -p tools && echo 'echo tool ran' > tools/run.sh", name="install tool")
    ref = machine.snapshot_ref()
    assert ref == {"provider": "docker", "kind": "image", "image_id": ref["image_id"]}
    assert ref["image_id"].startswith("sha256:")  # Podman's commit answers the bare hex id
    assert api.get(f"/images/{ref['image_id']}/json").status_code == 200
    assert docker.controller.validate_artifact(ref) is True

    fork = docker.runtime.from_snapshot(ref)
    assert fork.exec("sh tools/run.sh").stdout == "tool ran\n"
    assert inspect(api, fork.container_id).json()["Config"]["Labels"]["rig.machine"] == fork.id

    machine.delete()
    fork.delete()
    fork.delete()  # already gone: fine
    assert inspect(api, machine.container_id).status_code == 404
    assert inspect(api, fork.container_id).status_code == 404
    with pytest.raises(ProviderError, match="Unknown docker machine"):
        docker.runtime.from_id(fork.id)

    assert docker.controller.delete_snapshot(ref) is True
    assert api.get(f"/images/{ref['image_id']}/json").status_code == 404
    assert docker.controller.validate_artifact(ref) is False
    with pytest.raises(ProviderError, match="rig apply"):
        docker.runtime.from_snapshot(ref)


def test_from_id_works_from_a_fresh_provider(docker: Harness, docker_daemon: Any, make_harness: Any) -> None:
    machine = docker.runtime.create_machine()
    machine.write_text("note", "kept\n")
    again = make_harness(plugin, {"image": docker_daemon.image}).runtime.from_id(machine.id)
    assert again.container_id == machine.container_id
    assert again.read_text("note") == "kept\n"


def test_a_missing_image_is_never_pulled(docker: Harness, docker_daemon: Any) -> None:
    with pytest.raises(ProviderError, match=r"rig never pulls images\. Run: docker pull rig-missing/image:1"):
        docker.runtime.create_machine(image="rig-missing/image:1")
    assert docker_daemon.api.get("/images/rig-missing/image:1/json").status_code == 404


def test_a_missing_rig_image_is_built_not_pulled(docker: Harness) -> None:
    with pytest.raises(ProviderError) as caught:
        docker.runtime.create_machine(image="rig/missing:1")
    assert "docker build -t rig/missing:1" in str(caught.value)
    assert "docker pull" not in str(caught.value)


def test_an_unreachable_daemon_is_one_clear_line(make_harness: Any, tmp_path: Path) -> None:
    socket = tmp_path / "no-daemon.sock"
    harness = make_harness(plugin, {"image": "x", "host": f"unix://{socket}"})
    with pytest.raises(ProviderError) as raised:
        harness.runtime.create_machine()
    message = str(raised.value)
    assert message.startswith(f"Cannot reach the Docker daemon at unix://{socket}")
    assert "\n" not in message


def test_the_configured_workdir_is_where_commands_run(docker_daemon: Any, make_harness: Any, docker: Harness) -> None:
    harness = make_harness(plugin, {"image": docker_daemon.image, "network": "none", "workdir": "/srv/app"})
    machine = harness.runtime.create_machine()
    assert machine.exec("pwd").stdout == "/srv/app\n"


def test_delete_machine_and_remove_effect_are_safe_to_retry(docker: Harness, docker_daemon: Any) -> None:
    kept = docker.runtime.create_machine()
    assert docker.runtime.delete_machine(kept.id) is True
    assert inspect(docker_daemon.api, kept.container_id).status_code == 404
    assert docker.runtime.delete_machine(kept.id) is False

    leftover = docker.runtime.create_machine()
    ref = leftover.snapshot_ref()
    snapshot = docker.controller.setup.storage.get(f"snapshot:{ref['image_id']}")
    assert snapshot is not None and isinstance(snapshot["value"], dict)
    journaled: list[EffectEntry] = [  # as the effects journal hands them back to rm
        {"id": leftover.id, "kind": "container", "resource": {"machine_id": leftover.id}},
        {"id": str(snapshot["value"]["effect_id"]), "kind": "image", "resource": {"image_id": ref["image_id"]}},
    ]
    for effect in journaled:
        assert docker.controller.remove_effect(effect) is True
        assert docker.controller.remove_effect(effect) is False  # twice: a retried rm must not fail
    assert inspect(docker_daemon.api, leftover.container_id).status_code == 404
    assert docker_daemon.api.get(f"/images/{ref['image_id']}/json").status_code == 404


@pytest.mark.parametrize("docker_daemon", ["unix", "podman"], indirect=True)
def test_a_command_whose_process_starts_after_its_timeout_is_still_killed(
    docker: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A busy engine (Podman under load, seen in CI) can start an exec's process seconds after it was
    # asked to: after the timeout's SIGTERM and even after the SIGKILL that follows the grace period.
    # A wrapper that waits before it records its pid stands in for that engine.
    monkeypatch.setattr(execution, "_WRAPPER", "sleep 3; " + execution._WRAPPER)
    machine = docker.runtime.create_machine()
    started = time.monotonic()
    result = machine.exec("sleep 300", timeout=0.2, check=False)
    assert result.timed_out
    assert time.monotonic() - started < 8, "rig waited for the stream until it gave the command up"
    running = machine.exec("ps -o args").stdout.splitlines()
    assert not [line for line in running if line.startswith("sleep 300")], running
