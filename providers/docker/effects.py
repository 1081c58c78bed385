"""Docker's effects: containers and snapshot images carry a ``rig.effect`` label (and a name or tag
made from the same id), so a container or image whose create reply was lost, or whose rig was
killed, is found again by ``rig rm`` and ``rig gc``; only what carries rig's labels for this
project is ever listed. An exec session (``exec``) is journaled only: its processes carry its id
(see execution.py), and removing it ends them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.execution import end_session
from providers.docker.images import familiar_tag
from providers.docker.labels import EFFECT_LABEL, KIND_LABEL, SNAPSHOT_REPO
from rigcli.errors import ProviderError, UnreachableError
from rigcli.provider_api import EXEC_EFFECT, EffectEntry, KeyValueStore

REMOVAL_WAIT_SECONDS = 30.0  # how long a removal already in progress (HTTP 409) is waited for


def snapshot_changes(effect_id: str) -> list[str]:
    """The commit's Dockerfile changes: the image's own effect label (the container's is inherited).

    One instruction per label, each sent as its own ``changes`` value: Podman reads
    ``LABEL a=1 b=2`` as one label ``a`` whose value is ``1 b=2``.
    """
    return [f"LABEL {EFFECT_LABEL}={effect_id}", f"LABEL {KIND_LABEL}=snapshot"]


def _filters(project_dir: str) -> dict[str, str]:
    return {"filters": json.dumps({"label": [f"rig.project={project_dir}"]})}


def find(client: DockerClient, project_dir: str) -> list[EffectEntry]:
    """Containers and snapshot images rig made for this project, journaled or not.

    A container is rig's when its name is its ``rig.effect`` (or, from before the journal,
    ``rig.machine``) label: one started by hand from a snapshot image inherits the labels, not the
    name. An image is rig's when it is tagged ``rig/snapshot:...``.
    """
    found: list[EffectEntry] = []
    params = {"all": "true", **_filters(project_dir)}
    for container in client.json("GET", "/containers/json", params=params, what="container list"):
        labels: dict[str, Any] = container.get("Labels") or {}
        names = {str(name).lstrip("/") for name in container.get("Names") or []}
        named = [labels.get(key) for key in (EFFECT_LABEL, "rig.machine") if labels.get(key) in names]
        if named:
            effect_id = str(named[0])
            resource = {"machine_id": effect_id, "container_id": container["Id"], "host": client.host}
            found.append({"id": effect_id, "kind": "container", "resource": resource})
    for image in client.json("GET", "/images/json", params=_filters(project_dir), what="image list"):
        labels = image.get("Labels") or {}
        tags = [tag for tag in map(familiar_tag, image.get("RepoTags") or []) if tag.startswith(f"{SNAPSHOT_REPO}:")]
        if not tags:
            continue  # labelled through the container it was committed from, but not committed by rig
        labelled = labels.get(EFFECT_LABEL) if labels.get(KIND_LABEL) == "snapshot" else None
        effect_id = labelled if labelled and f"{SNAPSHOT_REPO}:{labelled}" in tags else image["Id"]
        resource = {"image_id": image["Id"], "host": client.host}
        if image.get("ParentId"):  # a snapshot of a snapshot: the daemon removes children first (gc_order)
            resource["parent"] = image["ParentId"]
        found.append({"id": str(effect_id), "kind": "image", "resource": resource})
    return found


def remove_container(client: DockerClient, target: str, *, wait: float = REMOVAL_WAIT_SECONDS) -> bool:
    """Force-remove a container by id or name; True if it was there. A removal already in progress
    (a killed rig's request the daemon is still carrying out) is waited for, not taken as a failure."""
    deadline = time.monotonic() + wait
    while True:
        response = client.request(
            "DELETE",
            f"/containers/{target}",
            params={"force": "true", "v": "true"},
            ok=(204, 404, 409),
            what="container removal",
        )
        if response.status_code != 409:
            return bool(response.status_code == 204)
        if "in progress" not in response.text or time.monotonic() > deadline:
            raise client.error(response, "container removal")
        time.sleep(0.1)  # the other removal ends in a moment; then ours answers 404 (gone) or 204


def remove(client: DockerClient, storage: KeyValueStore, effect: EffectEntry) -> bool:
    """Remove a journaled or found container or image; False when the daemon says it is gone."""
    resource = effect["resource"]
    host = resource.get("host")
    if isinstance(host, str) and host and host != client.host:
        raise UnreachableError(f"{effect['kind']} {effect['id']} was made on the daemon at {host}, not {client.host}")
    if effect["kind"] == "container":
        # Before its reply, only its name (the effect id) is known; the name finds it too.
        target = str(resource.get("container_id") or resource.get("machine_id") or effect["id"])
        removed = remove_container(client, target)
        storage.delete(f"machine:{resource.get('machine_id') or effect['id']}")
        return removed
    if effect["kind"] == EXEC_EFFECT:  # a command whose rig is gone: end what is left of it
        return end_session(client, str(resource.get("container_id") or ""), effect["id"])
    if effect["kind"] == "image":
        image_id = resource.get("image_id")
        target = str(image_id or f"{SNAPSHOT_REPO}:{effect['id']}")  # the tag, when the commit reply was lost
        response = client.request(
            "DELETE", f"/images/{target}", params={"force": "true"}, ok=(200, 404), what="image removal"
        )
        if image_id:
            storage.delete(f"snapshot:{image_id}")
        return bool(response.status_code == 200)
    raise ProviderError(f"docker cannot remove a {effect['kind']!r} effect")


__all__ = ["EFFECT_LABEL", "KIND_LABEL", "SNAPSHOT_REPO", "find", "remove", "remove_container", "snapshot_changes"]
