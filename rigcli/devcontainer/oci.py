"""Features published to an OCI registry (``ghcr.io/devcontainers/features/node:1``): fetched once with
httpx, kept under rig's cache by reference, and read from there afterwards.

HTTPS always, with anonymous bearer tokens as registries hand them out; plain HTTP only to a
registry on this machine's loopback (after HTTPS failed there). A reference is fetched the first
time a load meets it and kept (``$RIG_HOME/cache/devcontainer-features``): a tag that moves later
is seen once that copy is removed, or with a reference by digest (``...@sha256:...``).
"""

from __future__ import annotations

import io
import ipaddress
import json
import os
import re
import shutil
import tarfile
import tempfile
from typing import TYPE_CHECKING

from rigcli.errors import ConfigError
from rigcli.speed.digests import sha256

if TYPE_CHECKING:
    import httpx

LAYER_TYPE = "application/vnd.devcontainers.layer.v1+tar"
MANIFEST_TYPES = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"
CONNECT_SECONDS, READ_SECONDS = 10.0, 60.0
_REF = re.compile(
    r"^(?P<registry>[^/]+)/(?P<path>[a-z0-9._/-]+?)(?::(?P<tag>[\w][\w.-]{0,127})|@(?P<digest>sha256:[0-9a-f]{64}))?$"
)


class FeatureRef:
    """``registry/namespace/id[:tag|@digest]``, parsed."""

    def __init__(self, text: str) -> None:
        found = _REF.match(text)
        if found is None or ("." not in found["registry"] and ":" not in found["registry"]
                             and not found["registry"].startswith("localhost")):  # fmt: skip
            raise ConfigError(f'Feature "{text}" is neither ./a-local-folder nor an OCI reference (registry/path:tag)')
        self.text = text
        self.registry: str = found["registry"]
        self.path: str = found["path"]
        self.reference: str = found["digest"] or found["tag"] or "latest"
        self.resource = f"{self.registry}/{self.path}"
        self.id = self.path.rsplit("/", 1)[-1]

    @property
    def loopback(self) -> bool:
        host = self.registry.rsplit(":", 1)[0] if not self.registry.startswith("[") else self.registry[1:].split("]")[0]
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False


def fetched_feature(ref: FeatureRef, cache_root: str) -> tuple[str, str]:
    """The feature's folder and its manifest digest: from the cache, else fetched into it."""
    home = os.path.join(cache_root, sha256(ref.text.encode()).hexdigest()[:32])
    folder, marker = os.path.join(home, "feature"), os.path.join(home, "manifest-digest")
    try:
        with open(marker, encoding="utf-8") as handle:
            return folder, handle.read().strip()
    except OSError:
        pass
    manifest_digest, layer = _download(ref)
    os.makedirs(cache_root, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".fetch-", dir=cache_root)
    try:
        _unpack(layer, os.path.join(staging, "feature"), ref)
        with open(os.path.join(staging, "manifest-digest"), "w", encoding="utf-8") as handle:
            handle.write(manifest_digest)
        shutil.rmtree(home, ignore_errors=True)
        os.replace(staging, home)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder, manifest_digest


def _download(ref: FeatureRef) -> tuple[str, bytes]:
    import httpx  # only when a feature is fetched

    schemes = ["https", "http"] if ref.loopback else ["https"]
    problems: list[str] = []
    for scheme in schemes:
        base = f"{scheme}://{ref.registry}/v2/{ref.path}"
        try:
            with httpx.Client(timeout=httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)) as client:
                manifest, digest = _manifest(client, base, ref)
                return digest, _layer(client, base, manifest, ref)
        except httpx.HTTPError as exc:
            problems.append(f"{scheme}: {exc}")
    raise ConfigError(f'Feature "{ref.text}" could not be fetched from {ref.registry} ({"; ".join(problems)})')


def _get(client: httpx.Client, url: str, accept: str, ref: FeatureRef) -> httpx.Response:
    response = client.get(url, headers={"Accept": accept}, follow_redirects=True)
    if response.status_code == 401:
        token = _anonymous_token(client, response.headers.get("www-authenticate", ""), ref)
        response = client.get(
            url, headers={"Accept": accept, "Authorization": f"Bearer {token}"}, follow_redirects=True
        )
    if response.status_code != 200:
        raise ConfigError(
            f'Feature "{ref.text}": {ref.registry} answered {url.rsplit("/v2/", 1)[-1]} '
            f"with HTTP {response.status_code}"
        )
    return response


def _anonymous_token(client: httpx.Client, challenge: str, ref: FeatureRef) -> str:
    fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
    if not challenge.lower().startswith("bearer") or "realm" not in fields:
        raise ConfigError(f'Feature "{ref.text}": {ref.registry} asks for credentials rig does not have')
    params = {key: fields[key] for key in ("service", "scope") if key in fields}
    params.setdefault("scope", f"repository:{ref.path}:pull")
    answer = client.get(fields["realm"], params=params)
    token = answer.json().get("token") or answer.json().get("access_token") if answer.status_code == 200 else None
    if not token:
        raise ConfigError(f'Feature "{ref.text}": {ref.registry} gave no token (HTTP {answer.status_code})')
    return str(token)


def _manifest(client: httpx.Client, base: str, ref: FeatureRef) -> tuple[dict[str, object], str]:
    response = _get(client, f"{base}/manifests/{ref.reference}", MANIFEST_TYPES, ref)
    digest = response.headers.get("docker-content-digest") or "sha256:" + sha256(response.content).hexdigest()
    try:
        manifest = json.loads(response.content)
    except ValueError:
        raise ConfigError(f'Feature "{ref.text}": its manifest is not JSON') from None
    return manifest, digest


def _layer(client: httpx.Client, base: str, manifest: dict[str, object], ref: FeatureRef) -> bytes:
    layers = manifest.get("layers")
    chosen = next(
        (item for item in layers if isinstance(item, dict) and item.get("mediaType") == LAYER_TYPE),
        None,
    ) if isinstance(layers, list) else None  # fmt: skip
    if chosen is None:
        raise ConfigError(f'Feature "{ref.text}" is not a dev container feature (no {LAYER_TYPE} layer)')
    digest = str(chosen.get("digest"))
    data = _get(client, f"{base}/blobs/{digest}", "*/*", ref).content
    if "sha256:" + sha256(data).hexdigest() != digest:
        raise ConfigError(f'Feature "{ref.text}": its layer does not match its digest {digest}')
    return data


def _unpack(layer: bytes, folder: str, ref: FeatureRef) -> None:
    os.makedirs(folder)
    try:
        with tarfile.open(fileobj=io.BytesIO(layer), mode="r:*") as archive:
            archive.extractall(folder, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ConfigError(f'Feature "{ref.text}": its layer cannot be unpacked ({exc})') from None


__all__ = ["FeatureRef", "fetched_feature"]
