"""Snapshots through the registry: commit the task's container on its node, push it, find and delete rig's tags.

A snapshot is ``<registry>/rig/snapshot:<tag>``, the tag being its effect id: ``<project key>-<machine>-<n>``,
so the project's tags are found by their prefix and confirmed by the image's own labels (``rig.project``,
``rig.effect`` = the tag, ``rig.kind`` = snapshot). Machines run it by digest: the node that committed
it has it already, any other pulls exactly that.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import secrets
import time

from providers.docker import distribution
from providers.docker.client import DockerClient, daemon_message
from providers.docker.effects import EFFECT_LABEL, KIND_LABEL, snapshot_changes
from providers.docker.images import full_image_id
from providers.docker.registry import RegistryClient
from providers.docker.registry_name import Registry
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import EffectEntry
from rigcli.timeouts import long_bound

REPOSITORY = "rig/snapshot"
LEAVING_SECONDS = 15.0  # a removed service's container goes within a few seconds; its image copy waits for it
_IN_USE_BY = re.compile(r"used by (?:running |stopped )?container ([0-9a-f]+)")


def project_key(project_dir: str) -> str:
    """Eight hex digits naming the project in its snapshot tags."""
    return hashlib.sha256(project_dir.encode()).hexdigest()[:8]


def new_tag(project_dir: str, machine_id: str) -> str:
    return f"{project_key(project_dir)}-{machine_id}-{secrets.token_hex(2)}"


def commit(node: DockerClient, container_id: str, registry: Registry, tag: str, *, kind: str = "snapshot") -> str:
    """Commit the container on its node as ``<registry>/rig/snapshot:<tag>``, labelled with the tag and
    ``kind`` (a snapshot, or a stopped machine's saved files); the image id."""
    changes = (
        snapshot_changes(tag) if kind == "snapshot" else [f"LABEL {EFFECT_LABEL}={tag}", f"LABEL {KIND_LABEL}={kind}"]
    )
    created = node.json(
        "POST",
        "/commit",
        params={
            "container": container_id,
            "repo": f"{registry.name}/{REPOSITORY}",
            "tag": tag,
            "changes": changes,
            "pause": "true",  # the API's default, said: one instant of a container whose programs run on
        },
        json={},
        what="commit",
        bound=long_bound(),
    )
    return full_image_id(str(created["Id"]))


def push(node: DockerClient, registry: Registry, tag: str) -> str:
    """Push the tag from the node to the registry; the manifest digest the registry stored."""
    return distribution.push(node, f"{registry.name}/{REPOSITORY}", tag)


def image_reference(registry: Registry, digest: str) -> str:
    return f"{registry.name}/{REPOSITORY}@{digest}"


def delete(
    registry: RegistryClient, manager: DockerClient, nodes: list[DockerClient], tag: str, digest: str | None
) -> bool:
    """Delete the snapshot from the registry (the one copy that counts), then each node's copy, best effort.

    True when the registry had it. A node's copy is a cache of the registry's: one a node cannot
    remove now (unreachable, or in use by a machine) stays, and a later ``rig gc`` finds it by its labels.
    """
    removed = registry.delete(REPOSITORY, digest or tag)
    if digest and not removed:
        removed = registry.delete(REPOSITORY, tag)  # pushed again under the same tag: another digest
    for node in nodes:
        with contextlib.suppress(ProviderError):
            left = copies(node, tag)
            # A stop's commit of a container running an earlier stop's image is that image's child, and a
            # parent cannot go before its children (409): rounds, while one removes something.
            while left:
                kept = [image_id for image_id in left if not remove_copy(manager, node, image_id)]
                if len(kept) == len(left):
                    break
                left = kept
    return removed


def copies(node: DockerClient, tag: str) -> list[str]:
    """The ids of the node's images of this tag (committed there, or pulled by tag or digest): its label says so."""
    filters = json.dumps({"label": [f"{EFFECT_LABEL}={tag}"]})
    return [str(image["Id"]) for image in node.json("GET", "/images/json", params={"filters": filters})]


def remove_copy(manager: DockerClient, node: DockerClient, image_id: str, *, wait: float = LEAVING_SECONDS) -> bool:
    """Remove one node's copy; a container of a removed machine still using it is waited for (it goes within
    seconds), one of a live machine is not. True when the copy was removed."""
    deadline = time.monotonic() + wait
    while True:
        response = node.request(
            "DELETE", f"/images/{image_id}", params={"force": "true"}, ok=(200, 404, 409), what="image removal"
        )
        if response.status_code != 409:
            return bool(response.status_code == 200)
        user = _IN_USE_BY.search(daemon_message(response))
        if user is None or time.monotonic() > deadline or not _leaving(manager, node, user[1]):
            return False
        time.sleep(0.2)


def _leaving(manager: DockerClient, node: DockerClient, container: str) -> bool:
    """The container is a task of a service that no longer exists: its node is removing it."""
    found = node.request("GET", f"/containers/{container}/json", ok=(200, 404), what="container inspect")
    if found.status_code == 404:
        return True
    service = ((found.json().get("Config") or {}).get("Labels") or {}).get("com.docker.swarm.service.id")
    if not service:
        return False
    return manager.request("GET", f"/services/{service}", ok=(200, 404), what="service inspect").status_code == 404


def find_copies(nodes: list[DockerClient], registry: Registry, project_dir: str) -> list[EffectEntry]:
    """The project's snapshot copies on the nodes that answer (a node is a cache: one that does not is skipped)."""
    prefix, name = f"{project_key(project_dir)}-", f"{registry.name}/{REPOSITORY}"
    filters = json.dumps({"label": [f"rig.project={project_dir}", f"{KIND_LABEL}=snapshot"]})
    found: dict[str, EffectEntry] = {}
    for node in nodes:
        try:
            images = node.json("GET", "/images/json", params={"filters": filters}, what="image list")
        except ProviderError:
            continue
        for image in images:
            tag = str((image.get("Labels") or {}).get(EFFECT_LABEL) or "")
            names = [*(image.get("RepoTags") or []), *(image.get("RepoDigests") or [])]
            # Pushed or pulled as rig's snapshot: not an image someone committed from one of rig's machines.
            if tag.startswith(prefix) and any(n == f"{name}:{tag}" or n.startswith(f"{name}@") for n in names):
                found[tag] = {"id": tag, "kind": "image", "resource": {"snapshot_id": tag, "registry": registry.name}}
    return list(found.values())


def find(registry: RegistryClient, project_dir: str) -> list[EffectEntry]:
    """The project's snapshot tags in the registry: its prefix, and the image's labels say rig made it here."""
    prefix = f"{project_key(project_dir)}-"
    found: list[EffectEntry] = []
    for tag in registry.tags(REPOSITORY):
        if not tag.startswith(prefix):
            continue
        labels = registry.labels(REPOSITORY, tag)
        if not labels or labels.get("rig.project") != project_dir:
            continue
        if labels.get(EFFECT_LABEL) != tag or labels.get(KIND_LABEL) != "snapshot":
            continue
        resource: dict[str, JsonValue] = {"snapshot_id": tag, "registry": registry.registry.name}
        found.append({"id": tag, "kind": "image", "resource": resource})
    return found


__all__ = [
    "REPOSITORY",
    "commit",
    "copies",
    "delete",
    "find",
    "find_copies",
    "image_reference",
    "new_tag",
    "project_key",
    "push",
    "remove_copy",
]
