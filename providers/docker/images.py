"""Image ids and tags in one spelling whichever engine answered: Docker Engine or Podman's Docker-compatible API."""

from __future__ import annotations

from providers.docker.labels import PROVIDER_ID
from rigcli.provider_kit.refs import ref_id

IMAGE_KIND = "image"

_HEX = frozenset("0123456789abcdef")
# Podman names a short repository the way the registry would: docker.io/rig/snapshot:tag, where
# Docker says rig/snapshot:tag (and docker.io/library/busybox where Docker says busybox).
_DEFAULT_REGISTRY = "docker.io/"
_OFFICIAL_NAMESPACE = "library/"


def image_id_of(ref: object) -> str:
    """The image id in an ``image`` ref (or a bare id string)."""
    return full_image_id(ref_id(ref, provider_id=PROVIDER_ID, kind=IMAGE_KIND, key="image_id", what="docker image"))


def _is_bare_id(image_id: str) -> bool:
    """``re.fullmatch(r"[0-9a-f]{64}", image_id)`` (re is not imported for it)."""
    return len(image_id) == 64 and _HEX.issuperset(image_id)


def full_image_id(image_id: str) -> str:
    """``sha256:<hex>`` for a bare 64-hex id (Podman's commit answers one), anything else unchanged.

    Podman takes a bare id it does not know for a repository name and refuses it with HTTP 500,
    where the prefixed id is an ordinary 404: a deleted snapshot must read as missing, not as an error.
    """
    return f"sha256:{image_id}" if _is_bare_id(image_id) else image_id


def familiar_tag(tag: str) -> str:
    """A repository tag as Docker shows it: without the default registry and its ``library/`` namespace."""
    if tag.startswith(_DEFAULT_REGISTRY):
        tag = tag[len(_DEFAULT_REGISTRY) :]
        if tag.startswith(_OFFICIAL_NAMESPACE):
            tag = tag[len(_OFFICIAL_NAMESPACE) :]
    return tag


__all__ = ["IMAGE_KIND", "familiar_tag", "full_image_id", "image_id_of"]
