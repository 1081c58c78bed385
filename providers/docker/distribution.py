"""Moving images between a daemon and a registry: tag, push (the digest the registry stored) and pull by digest.

The daemon does the moving; rig reads its progress stream, in which a failure is a JSON line with
``error`` (the HTTP status is 200 by then). Push and pull are long by nature: RIG_LONG_TIMEOUT.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from rigcli.errors import ProviderError
from rigcli.timeouts import long_bound

if TYPE_CHECKING:
    from providers.docker.client import DockerClient
    from providers.docker.rawhttp import RawClient

NO_CREDENTIALS = base64.urlsafe_b64encode(b"{}").decode()  # what a registry without authentication takes


def tag(node: DockerClient, image: str, repository: str, name: str) -> None:
    """Give ``image`` (an id or reference) the name ``repository:name`` on the daemon."""
    node.request(
        "POST", f"/images/{image}/tag", params={"repo": repository, "tag": name}, ok=(201, 200), what="image tag"
    )


def push(node: DockerClient, repository: str, name: str) -> str:
    """Push ``repository:name`` (``repository`` starting with the registry's name) from the daemon to its
    registry; the manifest digest the registry stored."""
    response = node.request(
        "POST",
        f"/images/{repository}/push",
        params={"tag": name},
        headers={"X-Registry-Auth": NO_CREDENTIALS},
        what="image push",
        bound=long_bound(),
    )
    digest = None
    for message in _messages(response.text):
        aux = message.get("aux") or {}
        if isinstance(aux, dict) and aux.get("Digest"):
            digest = str(aux["Digest"])
    failure = _failure(response.text)
    if failure is not None:
        raise ProviderError(f"Pushing {repository}:{name} from {node.host} failed: {failure}")
    if digest is None:
        raise ProviderError(f"Pushing {repository}:{name} from {node.host} reported no digest")
    return digest


def pull(node: RawClient, repository: str, digest: str) -> None:
    """Pull exactly ``repository@digest`` onto the daemon (from the registry ``repository`` names).

    On the connection a fork already holds to the daemon (``rawhttp``): no second client, TLS
    context or handshake for it. Without X-Registry-Auth the daemon pulls anonymously."""
    response = node.request(
        "POST", "/images/create", params={"fromImage": repository, "tag": digest}, bound=long_bound()
    )
    text = response.body.decode("utf-8", "replace")
    if response.status == 200:
        failure = _failure(text)
    elif response.status == 404:
        failure = response.message()
    else:
        raise ProviderError(f"Docker image pull failed: {response.message()} (HTTP {response.status})")
    if failure is not None:
        raise ProviderError(f"Pulling {repository}@{digest} onto {node.endpoint.host} failed: {failure}")


def _messages(text: str) -> list[dict[str, object]]:
    found = []
    for line in text.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            found.append(message)
    return found


def _failure(text: str) -> str | None:
    """The first error the daemon's progress stream reports, or None."""
    for message in _messages(text):
        if message.get("error") or message.get("errorDetail"):
            detail = message.get("errorDetail")
            return str(message.get("error") or (detail.get("message") if isinstance(detail, dict) else detail))
    return None


__all__ = ["NO_CREDENTIALS", "pull", "push", "tag"]
