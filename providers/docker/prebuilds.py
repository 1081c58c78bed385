"""Snapshots shared through a registry (the docker provider's ``registry=``): one apply, forks on every daemon.

A task's snapshot is committed on the daemon as ever, then tagged and pushed as
``<registry>/rig/<workflow>/<task path, "." as "->:<first 16 hex digits of the task's cache key>``
(nothing of the clone's path, so every clone of the project names it alike) and referred to by the
digest the registry stored: ``{"provider": "docker", "kind": "image", "image_id": ..., "image":
"<registry>/rig/<workflow>/<task>@sha256:..."}``. Where the registry holds it:

- a plan asks the registry for the manifest, not the daemon (``validate``): gone is
  ``artifact-invalid``; a registry that does not answer within RIG_CHECK_TIMEOUT leaves the run
  cached, with a warning naming it (``UnconfirmedArtifactError``);
- a machine made from it on a daemon that lacks the image pulls exactly that digest first, from
  this registry only (``image_for``); nothing else is ever pulled;
- ``rig gc`` deletes the manifests rig pushed under ``rig/<workflow>/`` for this project's
  workflows that nothing refers to (``find``, ``remove``), and each daemon's copy as a cache of it.

The local copy keeps its ``rig/snapshot:<effect id>`` tag and labels, so everything that finds and
removes a daemon's snapshots finds it too; the effect journaled for it names the registry's copy
as well (``registry``, ``repository``, ``name``, then ``digest``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from providers.docker import distribution
from providers.docker.labels import EFFECT_LABEL, KIND_LABEL
from providers.docker.manifest_check import manifest_exists
from providers.docker.registry_name import Registry
from rigcli.errors import ProviderError, UnconfirmedArtifactError, UnreachableError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import EffectEntry, KeyValueStore, ProviderSetup
from rigcli.timeouts import check_bound

if TYPE_CHECKING:
    from providers.docker.client import DockerClient
    from providers.docker.rawhttp import RawClient
    from providers.docker.registry import RegistryClient

NAMESPACE = "rig"  # every repository rig pushes is under <registry>/rig/<workflow>/
KEY_DIGITS = 16
_OTHER = re.compile(r"[^a-z0-9_]+")
_JOINS = re.compile(r"[-_]{2,}")  # a run of separators is "-" unless it is "__" or all "-"


class Daemon(Protocol):
    """What the registry's side of snapshots asks of the controller (``DockerController``)."""

    @property
    def setup(self) -> ProviderSetup: ...
    @property
    def client(self) -> DockerClient: ...
    @property
    def raw(self) -> RawClient: ...


def component(text: str) -> str:
    """``text`` as one component of a repository path (the registry's grammar): lowercase letters and
    digits, joined by ``_``, ``__`` or ``-``; every other run of characters (``.`` too) becomes ``-``."""
    dashed = _OTHER.sub("-", text.lower())
    joined = _JOINS.sub(lambda run: run[0] if run[0] == "__" or set(run[0]) == {"-"} else "-", dashed).strip("-_")
    return joined[:100].rstrip("-_") or "x"


def repository_for(workflow: str, node_path: str) -> str:
    """``rig/<workflow>/<task path>``: the same in every clone of the project."""
    return f"{NAMESPACE}/{component(workflow)}/{component(node_path.replace('.', '-'))}"


def key_for(cache_key: str | None) -> str:
    """The first 16 hex digits of the task's cache key (``sha256-<hex>``); random outside a task."""
    digits = (cache_key or "").rpartition("-")[2]
    return digits[:KEY_DIGITS] if len(digits) >= KEY_DIGITS else os.urandom(KEY_DIGITS // 2).hex()


def shared_image(ref: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(registry, repository, digest)`` of a snapshot ref that names a registry's copy, else None."""
    image = ref.get("image")
    if not isinstance(image, str) or "@sha256:" not in image or "/" not in image:
        return None
    name, _, digest = image.partition("@")
    registry, _, repository = name.partition("/")
    return registry, repository, digest


class Prebuilds:
    """The registry's side of one controller's snapshots; its client is made on first use."""

    def __init__(self, registry: Registry, daemon: Daemon) -> None:
        self.registry = registry
        self.daemon = daemon
        self.storage: KeyValueStore = daemon.setup.storage
        self.workflows = daemon.setup.workflows  # whose repositories gc looks in
        self._client: RegistryClient | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> RegistryClient:
        with self._lock:
            if self._client is None:
                from providers.docker.registry import RegistryClient  # httpx: only where a registry is asked

                self._client = RegistryClient(self.registry)
            return self._client

    # -- pushing ----------------------------------------------------------------------------------------
    def place(self, workflow: str, node_path: str, cache_key: str | None) -> dict[str, JsonValue]:
        """Where a snapshot of this task goes (journaled before the commit): registry, repository, name."""
        repository = repository_for(workflow, node_path)
        return {"registry": self.registry.name, "repository": repository, "name": key_for(cache_key)}

    def push(self, image_id: str, place: Mapping[str, JsonValue]) -> str:
        """Tag the committed image as its place says and push it; the image reference by digest."""
        repository = f"{self.registry.name}/{place['repository']}"
        distribution.tag(self.daemon.client, image_id, repository, str(place["name"]))
        digest = distribution.push(self.daemon.client, repository, str(place["name"]))
        return f"{repository}@{digest}"

    # -- a plan's question, a fork's pull -----------------------------------------------------------
    def validate(self, ref: Mapping[str, Any]) -> bool:
        """Whether the registry still has the manifest (asked within RIG_CHECK_TIMEOUT). Another
        registry's is not this provider's; one that does not answer is UnconfirmedArtifactError."""
        shared = shared_image(ref)
        if shared is None or shared[0] != self.registry.name:
            return False
        _, repository, digest = shared
        try:  # without httpx: a plan's (and a fork's) one question of the registry
            return manifest_exists(self.registry, repository, digest, bound=check_bound())
        except ProviderError as exc:  # every such message names the registry
            raise UnconfirmedArtifactError(str(exc)) from None

    def image_for(self, ref: Mapping[str, Any]) -> str:
        """The image to start a machine from: the registry's copy by digest, pulled first when the daemon
        lacks it; only from this provider's registry."""
        shared = shared_image(ref)
        assert shared is not None
        registry, repository, digest = shared
        image = f"{registry}/{repository}@{digest}"
        if registry != self.registry.name:
            raise ProviderError(
                f'Docker snapshot image "{image}" is in the registry {registry}, and this provider pulls only '
                f"from its own ({self.registry.name}): run `rig apply` to make it there"
            )
        response = self.daemon.raw.request("GET", f"/images/{image}/json")
        if response.status == 404:
            try:
                distribution.pull(self.daemon.raw, f"{registry}/{repository}", digest)
            except ProviderError as exc:
                if self._gone(repository, digest):
                    raise ProviderError(
                        f'Docker snapshot image "{image}" is no longer in the registry {registry}; '
                        "run `rig apply` to rebuild it"
                    ) from exc
                raise
        elif response.status != 200:
            raise ProviderError(f"Docker image inspect failed: {response.message()} (HTTP {response.status})")
        return image

    def _gone(self, repository: str, digest: str) -> bool:
        """The registry says it has no such manifest (an uncertain answer is not "gone")."""
        try:
            return not manifest_exists(self.registry, repository, digest, bound=check_bound())
        except ProviderError:
            return False

    # -- rig rm, rig gc -------------------------------------------------------------------------------
    def remove(self, effect: EffectEntry) -> bool:
        """Delete the registry's copy (the one that counts), then this daemon's copies of it (a cache:
        another daemon's are left to its own ``rig gc``). True when something was there."""
        resource = effect["resource"]
        pushed_to = resource.get("registry")
        if pushed_to != self.registry.name:
            raise UnreachableError(
                f"{effect['kind']} {effect['id']} was pushed to the registry {pushed_to}, not {self.registry.name}"
            )
        repository = str(resource.get("repository") or "")
        if not repository.startswith(f"{NAMESPACE}/"):
            raise ProviderError(f"{effect['kind']} {effect['id']} names no repository of rig's: {repository!r}")
        digest = resource.get("digest")
        if not isinstance(digest, str) or not digest:
            digest = self._pushed_digest(effect["id"], repository, resource.get("name"))
        removed = bool(digest) and self.client.delete(repository, str(digest))
        return self._remove_copies(effect["id"]) or removed

    def delete(self, shared: tuple[str, str, str]) -> bool:
        """Delete the registry's copy a ref names (``shared_image``); only in this provider's registry."""
        registry, repository, digest = shared
        if registry != self.registry.name:
            raise ProviderError(
                f"{registry}/{repository}@{digest} is not in this provider's registry {self.registry.name}"
            )
        return self.client.delete(repository, digest)

    def _pushed_digest(self, effect_id: str, repository: str, name: object) -> str | None:
        """The digest the tag names, if the image behind it is this effect's (a push whose reply was
        lost); the tag may since name another push of the same task, which is not this effect's."""
        if not isinstance(name, str) or not name:
            return None
        found = self.client.image(repository, name)
        return found[0] if found is not None and found[2].get(EFFECT_LABEL) == effect_id else None

    def _remove_copies(self, effect_id: str) -> bool:
        """This daemon's copies of the snapshot (committed here or pulled), found by its label."""
        removed = False
        filters = json.dumps({"label": [f"{EFFECT_LABEL}={effect_id}"]})
        with contextlib.suppress(ProviderError):  # a cache: one that cannot go now goes at a later gc
            for image in self.daemon.client.json("GET", "/images/json", params={"filters": filters}):
                image_id = str(image["Id"])
                response = self.daemon.client.request(
                    "DELETE", f"/images/{image_id}", params={"force": "true"}, ok=(200, 404, 409), what="image removal"
                )
                removed = removed or response.status_code == 200
                self.storage.delete(f"snapshot:{image_id}")
        return removed

    def find(self) -> list[EffectEntry]:
        """The snapshots rig pushed under ``rig/<workflow>/`` for this project's workflows (by their labels),
        and this daemon's pulled copies of them; one entry per snapshot."""
        found: dict[str, EffectEntry] = {}
        for workflow in self.workflows:
            prefix = f"{NAMESPACE}/{component(workflow)}/"
            for repository in self.client.repositories(prefix):
                for name in self.client.tags(repository):
                    image = self.client.image(repository, name)
                    if image is None or image[2].get(KIND_LABEL) != "snapshot" or not image[2].get(EFFECT_LABEL):
                        continue  # not something rig pushed
                    digest, config, labels = image
                    resource: dict[str, JsonValue] = {"registry": self.registry.name, "repository": repository}
                    resource.update(name=name, digest=digest, image_id=config)
                    found[labels[EFFECT_LABEL]] = {"id": labels[EFFECT_LABEL], "kind": "image", "resource": resource}
            self._find_pulled(prefix, found)
        return list(found.values())

    def _find_pulled(self, prefix: str, found: dict[str, EffectEntry]) -> None:
        """This daemon's copies pulled from the registry under ``prefix`` (their labels are the clone's that
        made them, so the daemon's own search for the project's snapshots does not see them)."""
        filters = json.dumps({"label": [f"{KIND_LABEL}=snapshot"]})
        pulled_from = f"{self.registry.name}/{prefix}"
        for image in self.daemon.client.json("GET", "/images/json", params={"filters": filters}, what="image list"):
            effect_id = str((image.get("Labels") or {}).get(EFFECT_LABEL) or "")
            names = [name for name in image.get("RepoDigests") or [] if str(name).startswith(pulled_from)]
            if not effect_id or not names:
                continue
            name, _, digest = str(names[0]).partition("@")
            entry = found.setdefault(effect_id, {"id": effect_id, "kind": "image", "resource": {}})
            resource = {"registry": self.registry.name, "repository": name.partition("/")[2], "digest": digest}
            entry["resource"] = {**resource, "image_id": str(image["Id"]), **entry["resource"]}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


__all__ = ["NAMESPACE", "Prebuilds", "component", "key_for", "repository_for", "shared_image"]
