"""A container committed to a snapshot image: journaled under its tag first, kept in provider storage, and
with a registry (a task's snapshot) pushed there and named by the digest it stored (``prebuilds``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from providers.docker.effects import SNAPSHOT_REPO, snapshot_changes
from providers.docker.images import IMAGE_KIND, full_image_id
from providers.docker.labels import PROVIDER_ID
from rigcli.provider_api import EffectJournal, ProviderSetup, RuntimeContext
from rigcli.provider_kit import now_iso
from rigcli.timeouts import long_bound

if TYPE_CHECKING:
    from providers.docker.client import DockerClient
    from providers.docker.prebuilds import Prebuilds


class Committer(Protocol):
    """What a commit asks of the controller (``DockerController``)."""

    @property
    def setup(self) -> ProviderSetup: ...
    @property
    def client(self) -> DockerClient: ...
    @property
    def prebuilds(self) -> Prebuilds | None: ...


def commit_container(
    controller: Committer,
    container_id: str,
    machine_id: str,
    effects: EffectJournal,
    *,
    made_from: str | None,
    changes: Sequence[str] = (),
    task: RuntimeContext | None = None,
) -> dict[str, Any]:
    """Commit (paused meanwhile: one instant of the container); the snapshot's artifact ref."""
    tag = f"{machine_id}-{os.urandom(4).hex()}"  # the image's effect id: its tag finds it before its id is known
    prebuilds = controller.prebuilds if task is not None else None
    place = {} if prebuilds is None or task is None else prebuilds.place(task.workflow, task.node_path, task.cache_key)
    effects.requested(
        "image", {"tag": f"{SNAPSHOT_REPO}:{tag}", "host": controller.client.host, **place}, effect_id=tag
    )
    created = controller.client.json(
        "POST",
        "/commit",
        params={
            "container": container_id,
            "repo": SNAPSHOT_REPO,
            "tag": tag,
            "changes": [*changes, *snapshot_changes(tag)],
            "pause": "true",
        },
        json={},
        what="commit",
        bound=long_bound(),
    )
    image_id = full_image_id(created["Id"])
    controller.setup.storage.set(
        f"snapshot:{image_id}",
        {
            "image_id": image_id,
            "tag": f"{SNAPSHOT_REPO}:{tag}",
            "created_at": now_iso(),
            "source_machine": machine_id,
            "effect_id": tag,
        },
    )
    # What it was made from: gc removes a snapshot of a snapshot before the snapshot under it.
    parent = {"parent": made_from} if made_from and made_from.startswith("sha256:") else {}
    effects.confirmed(tag, {"image_id": image_id, **parent})
    ref: dict[str, Any] = {"provider": PROVIDER_ID, "kind": IMAGE_KIND, "image_id": image_id}
    if prebuilds is not None:  # committed and journaled: a push that fails leaves it for gc to find
        ref["image"] = prebuilds.push(image_id, place)
        effects.confirmed(tag, {"digest": ref["image"].partition("@")[2]})
    return ref


__all__ = ["Committer", "commit_container"]
