"""Images made or fetched on purpose: a Dockerfile built through the Engine API (``POST /build``), a
named image pulled only when the daemon lacks it, and an image's configuration.

A built image is one of rig's snapshots: tagged ``rig/snapshot:<effect id>`` and labelled as a commit
is (``rig.project``, ``rig.effect``, ``rig.kind``), journaled before the build starts, so ``rig gc``
finds and removes it as it does a committed one. The build's output becomes the task's log, line by
line; a step that fails fails the build with the daemon's own message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from providers.docker.images import IMAGE_KIND, full_image_id
from providers.docker.labels import EFFECT_LABEL, KIND_LABEL, PROVIDER_ID, SNAPSHOT_REPO
from rigcli.errors import ProviderError
from rigcli.provider_api import EffectJournal
from rigcli.provider_kit import now_iso

if TYPE_CHECKING:
    from providers.docker.client import DockerClient
    from providers.docker.endpoint import Endpoint
    from rigcli.provider_api import ProviderSetup

QUIET_SECONDS = 600.0  # a build step or a pull that prints nothing this long is taken as stuck
Say = Callable[[str], None]


class ImageHost(Protocol):
    """What images made or fetched on purpose ask of the controller (``DockerController``)."""

    @property
    def setup(self) -> ProviderSetup: ...
    @property
    def client(self) -> DockerClient: ...
    @property
    def endpoint(self) -> Endpoint: ...


def image_inspect(controller: ImageHost, name: str) -> dict[str, Any] | None:
    """The daemon's ``/images/NAME/json``, or None when it has no such image."""
    response = controller.client.request("GET", f"/images/{name}/json", ok=(200, 404), what="image inspect")
    return None if response.status_code == 404 else dict(response.json())


def ensure_image(controller: ImageHost, name: str, say: Say) -> dict[str, Any]:
    """The image ``name`` as the daemon has it, pulled first only when it has none by that name."""
    found = image_inspect(controller, name)
    if found is not None:
        return found
    image, _, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "latest")
    say(f"Pulling {name} (the daemon at {controller.endpoint.host} does not have it)")
    with controller.client.upload(
        "/images/create", content=b"", params={"fromImage": image, "tag": tag}, read_timeout=QUIET_SECONDS
    ) as response:
        _follow(response, f"pull of {name}", say)
    found = image_inspect(controller, name)
    if found is None:
        raise ProviderError(f"Docker pull of {name} finished, but the daemon has no such image")
    return found


def build_image(
    controller: ImageHost,
    effects: EffectJournal,
    context: bytes,
    *,
    dockerfile: str,
    args: Mapping[str, str],
    target: str | None,
    say: Say,
) -> dict[str, Any]:
    """Build ``context`` (a tar) with ``dockerfile`` (its path inside it); the image's artifact ref."""
    tag = f"build-{os.urandom(6).hex()}"
    host = controller.client.host
    effects.requested("image", {"tag": f"{SNAPSHOT_REPO}:{tag}", "host": host}, effect_id=tag)
    labels = {"rig.project": controller.setup.project_dir, EFFECT_LABEL: tag, KIND_LABEL: "snapshot"}
    params: dict[str, str] = {
        "t": f"{SNAPSHOT_REPO}:{tag}",
        "dockerfile": dockerfile,
        "buildargs": json.dumps(dict(args)),
        "labels": json.dumps(labels),
        "rm": "1",
        "forcerm": "1",
    }
    if target:
        params["target"] = target
    with controller.client.upload("/build", content=context, params=params, read_timeout=QUIET_SECONDS) as response:
        built = _follow(response, "build", say)
    found = image_inspect(controller, f"{SNAPSHOT_REPO}:{tag}")
    image_id = full_image_id(str(found["Id"] if found else built or ""))
    if not image_id:
        raise ProviderError("Docker build finished without an image")
    controller.setup.storage.set(
        f"snapshot:{image_id}",
        {"image_id": image_id, "tag": f"{SNAPSHOT_REPO}:{tag}", "created_at": now_iso(), "effect_id": tag},
    )
    effects.confirmed(tag, {"image_id": image_id})
    return {"provider": PROVIDER_ID, "kind": IMAGE_KIND, "image_id": image_id}


def _follow(response: Any, what: str, say: Say) -> str | None:
    """Read a build's or pull's JSON lines to the end: each line of output said, the image id kept,
    an error raised with the daemon's words."""
    if response.status_code != 200:
        response.read()
        raise ProviderError(f"Docker {what} failed: {_message(response.text)} (HTTP {response.status_code})")
    image_id: str | None = None
    for line in response.iter_lines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            say(line)
            continue
        if item.get("error"):
            raise ProviderError(f"Docker {what} failed: {str(item['error']).strip()}")
        aux = item.get("aux")
        if isinstance(aux, dict) and isinstance(aux.get("ID"), str):
            image_id = aux["ID"]
        text = item.get("stream") or item.get("status")
        if isinstance(text, str) and text.strip():
            say(text.rstrip("\n"))
    return image_id


def _message(text: str) -> str:
    try:
        return str(json.loads(text).get("message") or text).strip()
    except (ValueError, AttributeError):
        return text.strip()


__all__ = ["build_image", "ensure_image", "image_inspect"]
