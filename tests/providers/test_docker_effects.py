"""Docker containers and snapshot images are journaled before they are made and found by their labels."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness

from providers.docker import plugin
from rigcli.engine.effects import StoreEffects
from rigcli.errors import ProviderError
from rigcli.state import create_state_store


@pytest.fixture
def journaled(docker: Harness, project: Path) -> Iterator[tuple[Any, Any, Any]]:
    """(store, controller, runtime): the docker provider wired to a real effects journal."""
    store = create_state_store(project_dir=project)
    store.sync_schema()
    controller = plugin.create_provider(replace(docker.setup, effects=StoreEffects(store, "docker")))
    runtime = controller.runtime(replace(docker.context, effects=StoreEffects(store, "docker", ("run", "r1"))))
    yield store, controller, runtime
    controller.close()
    store.close()


def _labels(api: Any, path: str) -> dict[str, str]:
    info = api.get(path).json()
    labels: dict[str, str] = info["Config"]["Labels"] or {}
    return labels


def test_containers_and_images_carry_their_effect_id_and_are_journaled(journaled: Any, docker_daemon: Any) -> None:
    store, controller, runtime = journaled
    machine = runtime.create_machine()
    ref = machine.snapshot_ref()

    container, image = sorted(store.list_effects(), key=lambda effect: effect.kind)
    assert (container.kind, container.id, container.status) == ("container", machine.id, "confirmed")
    assert container.resource["container_id"] == machine.container_id
    assert (image.kind, image.status, image.resource["image_id"]) == ("image", "confirmed", ref["image_id"])
    assert {container.owner_id, image.owner_id} == {"r1"}
    labels = _labels(docker_daemon.api, f"/containers/{machine.container_id}/json")
    assert (labels["rig.effect"], labels["rig.kind"]) == (machine.id, "machine")
    image_labels = _labels(docker_daemon.api, f"/images/{ref['image_id']}/json")
    assert (image_labels["rig.effect"], image_labels["rig.kind"]) == (image.id, "snapshot")

    found = {(entry["kind"], entry["id"]) for entry in controller.find_effects()}
    assert found == {("container", machine.id), ("image", image.id)}

    # A container made from the snapshot keeps its own labels, not the image's.
    child = runtime.from_snapshot(ref)
    child_labels = _labels(docker_daemon.api, f"/containers/{child.container_id}/json")
    assert (child_labels["rig.effect"], child_labels["rig.kind"]) == (child.id, "machine")

    for effect in (container, image):
        entry = {"id": effect.id, "kind": effect.kind, "resource": store.get_effect(effect.id).resource}
        if effect.kind == "image":
            child.delete()  # an image in use by a container is not removed without its container
        assert controller.remove_effect(entry) is True
        assert controller.remove_effect(entry) is False  # already gone counts as removed
        assert store.get_effect(effect.id).status == "deleted"
    assert docker_daemon.api.get(f"/images/{ref['image_id']}/json").status_code == 404


def test_what_rig_did_not_make_is_never_found(journaled: Any, docker_daemon: Any, project: Path) -> None:
    _, controller, runtime = journaled
    api = docker_daemon.api
    ref = runtime.create_machine().snapshot_ref()
    # Started by hand from rig's snapshot image: it inherits the labels, not the name.
    name = f"by-hand-{secrets.token_hex(4)}"  # the daemon may be shared with other test runs at once
    by_hand = api.post("/containers/create", params={"name": name}, json={"Image": ref["image_id"], "Cmd": ["true"]})
    assert by_hand.status_code == 201, by_hand.text
    try:
        found = {entry["id"] for entry in controller.find_effects()}
        assert name not in found
        assert all(entry["resource"].get("container_id") != by_hand.json()["Id"] for entry in controller.find_effects())
    finally:
        api.delete(f"/containers/{name}", params={"force": "true"})


def test_a_container_whose_create_reply_was_lost_is_found_by_its_name(journaled: Any, docker_daemon: Any) -> None:
    store, controller, _ = journaled
    effects = StoreEffects(store, "docker", ("workspace", "w1"))
    effect_id = effects.requested(
        "container", {"machine_id": "rig-0123456789ab", "host": controller.client.host}, effect_id="rig-0123456789ab"
    )
    made = docker_daemon.api.post(
        "/containers/create", params={"name": effect_id}, json={"Image": docker_daemon.image, "Cmd": ["true"]}
    )
    assert made.status_code == 201, made.text  # made, but rig never heard back

    entry = {"id": effect_id, "kind": "container", "resource": store.get_effect(effect_id).resource}
    assert controller.remove_effect(entry) is True
    assert docker_daemon.api.get(f"/containers/{effect_id}/json").status_code == 404


def test_a_daemon_that_does_not_answer_is_never_taken_as_gone(journaled: Any, tmp_path: Path) -> None:
    _, controller, _ = journaled
    down = plugin.create_provider(replace(controller.setup, config={"host": f"unix://{tmp_path}/no.sock"}))
    entry = {"id": "rig-0123456789ab", "kind": "container", "resource": {"machine_id": "rig-0123456789ab"}}
    with pytest.raises(ProviderError):
        down.remove_effect(entry)
    with pytest.raises(ProviderError):
        down.find_effects()
    down.close()


class _InProgressDaemon:
    """Answers a container removal with 409 "already in progress" twice, then 404 (gone)."""

    host = "unix:///fake.sock"

    def __init__(self) -> None:
        self.calls = 0

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        self.calls += 1
        if self.calls <= 2:
            return httpx.Response(409, json={"message": "removal of container c1 is already in progress"})
        return httpx.Response(404, json={"message": "No such container: c1"})

    def error(self, response: Any, what: str) -> ProviderError:
        return ProviderError(f"Docker {what} failed (HTTP {response.status_code})")


def test_a_removal_already_in_progress_is_waited_for_not_reported() -> None:
    # A killed rig's DELETE is still being carried out by the daemon when rm runs again.
    from providers.docker.effects import remove_container

    daemon = _InProgressDaemon()
    assert remove_container(daemon, "c1") is False  # type: ignore[arg-type]
    assert daemon.calls == 3
    stuck = _InProgressDaemon()
    with pytest.raises(ProviderError, match="409"):
        remove_container(stuck, "c1", wait=0)  # type: ignore[arg-type]
