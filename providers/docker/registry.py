"""A registry's v2 API as rig needs it: is a manifest there, its digest, its labels, delete it, list repositories.

Used by the ``docker`` provider (snapshots pushed for other daemons, see ``prebuilds``) and by
``swarm`` (every image its nodes run).

Manifests are asked for with the Accept headers of every manifest type a Docker Engine pushes: a
registry asked without them may convert the manifest and answer another digest, and a deletion by
that digest would miss the one the tag points to.

Every request is bounded (``rigcli/timeouts.py``): connecting by RIG_CONNECT_TIMEOUT, each read
by RIG_READ_TIMEOUT (or the bound a caller names: a plan's question is brief). A registry that
does not answer, or cannot be reached, is an UnreachableError naming it: uncertain, never "gone".
One that ran out of a bound is not asked again, by this process for SILENCE_STANDS seconds,
anything it would have as long or less to answer: a plan of many snapshots waits for it once
(``manifest_check`` keeps that memory, and asks a plan's question without httpx). One that
refuses deletions (HTTP 405) is a DeletionRefusedError, and is not asked to delete again by the
same client.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from providers.docker.httpx_lib import load_httpx
from providers.docker.manifest_check import ACCEPT, MANIFEST_TYPES, refuse_if_silent, silent
from providers.docker.registry_name import Registry, is_loopback
from rigcli.errors import DeletionRefusedError, ProviderError, UnreachableError
from rigcli.jsonutil import JsonValue
from rigcli.timeouts import Bound, check_bound, connect_bound, read_bound

load_httpx()  # httpx with its optional imports hidden (httpx_lib.py); the import below finds it loaded
import httpx  # noqa: E402


class _VerifyingOnFirstUse(httpx.BaseTransport):
    """httpx's verifying HTTPS transport, made (with its CA bundle) on the first https request."""

    def __init__(self) -> None:
        self._transport: httpx.HTTPTransport | None = None
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            if self._transport is None:
                self._transport = httpx.HTTPTransport()
        return self._transport.handle_request(request)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class RegistryClient:
    """One connection pool to the registry, made on first use; thread-safe (forks may run side by side)."""

    def __init__(self, registry: Registry, *, bound: Bound | None = None) -> None:
        """``bound``: each read of an answer, unless a request names its own (default RIG_READ_TIMEOUT)."""
        self.registry = registry
        self._bound = bound
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._refused: DeletionRefusedError | None = None

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:  # every request passes its own timeout
                if self.registry.scheme == "http" and is_loopback(self.registry.name):
                    # Plain HTTP: loading the CA bundle would cost every command tens of ms for nothing.
                    # A redirect to https (a blob in other storage) still verifies, with a transport made then.
                    # This machine's own registry is never asked through a proxy either.
                    plain, https = httpx.HTTPTransport(verify=False), _VerifyingOnFirstUse()
                    self._client = httpx.Client(base_url=self.registry.url, transport=plain, mounts={"https://": https})
                else:
                    self._client = httpx.Client(base_url=self.registry.url)
            return self._client

    def _send(self, method: str, path: str, *, bound: Bound | None = None, **kwargs: Any) -> httpx.Response:
        reading = bound or self._bound or read_bound()
        connecting = connect_bound()
        connecting = reading if reading.seconds < connecting.seconds else connecting
        seconds = reading.seconds
        timeout = httpx.Timeout(connect=connecting.seconds, read=seconds, write=seconds, pool=seconds)
        url = self.registry.url
        refuse_if_silent(url, reading)
        try:
            return self._http().request(method, f"/v2/{path}", timeout=timeout, **kwargs)
        except httpx.ConnectTimeout:
            raise silent(url, f"no connection within {connecting}", reading) from None
        except httpx.TimeoutException:
            raise silent(url, f"no answer to {method} /v2/{path} within {reading}", reading) from None
        except (httpx.TransportError, OSError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise UnreachableError(f"Cannot reach the registry at {url}: {reason}") from None

    def _error(self, response: httpx.Response, what: str) -> ProviderError:
        try:
            errors = response.json().get("errors") or []
            message = "; ".join(str(item.get("message") or item.get("code")) for item in errors)
        except (ValueError, AttributeError):
            message = ""
        detail = message or response.text.strip()[:200] or response.reason_phrase
        return ProviderError(f"Registry {self.registry.name}: {what} failed: {detail} (HTTP {response.status_code})")

    def ping(self) -> int:
        """The status of ``GET /v2/``: 200 (or 401 when it wants credentials) from a registry."""
        return self._send("GET", "").status_code

    def digest(self, repository: str, reference: str, *, bound: Bound | None = None) -> str | None:
        """The manifest digest a tag (or digest) names; None when the registry has no such manifest."""
        response = self._send("HEAD", f"{repository}/manifests/{reference}", headers=ACCEPT, bound=bound)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._error(response, f"manifest lookup of {repository}:{reference}")
        found = response.headers.get("Docker-Content-Digest")
        if found:
            return str(found)
        body = self._send("GET", f"{repository}/manifests/{reference}", headers=ACCEPT, bound=bound)
        if body.status_code != 200:
            raise self._error(body, f"manifest read of {repository}:{reference}")
        return f"sha256:{hashlib.sha256(body.content).hexdigest()}"

    def exists(self, repository: str, reference: str, *, bound: Bound | None = None) -> bool:
        return self.digest(repository, reference, bound=bound) is not None

    def delete(self, repository: str, reference: str) -> bool:
        """Delete the manifest a tag or digest names (and with it every tag on it); False when it was gone.

        A registry that refuses deletions is a DeletionRefusedError, the same one for every later call."""
        if self._refused is not None:
            raise self._refused
        digest = reference if reference.startswith("sha256:") else self.digest(repository, reference)
        if digest is None:
            return False
        response = self._send("DELETE", f"{repository}/manifests/{digest}")
        if response.status_code in (200, 202):
            return True
        if response.status_code == 404:
            return False
        if response.status_code == 405:
            self._refused = DeletionRefusedError(
                f"Registry {self.registry.name} does not allow deletions: rig deleted nothing there "
                "(enable them with storage.delete.enabled: true in the registry's config)"
            )
            raise self._refused
        raise self._error(response, f"deletion of {repository}@{digest}")

    def repositories(self, prefix: str) -> list[str]:
        """Every repository whose name starts with ``prefix`` (the catalog, following its pages)."""
        found: list[str] = []
        path: str | None = "_catalog"
        params: dict[str, Any] | None = {"n": 1000}
        while path is not None:
            response = self._send("GET", path, params=params)
            if response.status_code != 200:
                raise self._error(response, "repository list")
            found.extend(name for name in response.json().get("repositories") or [] if name.startswith(prefix))
            path, params = _next_page(response.headers.get("Link")), None
        return found

    def tags(self, repository: str) -> list[str]:
        """Every tag of ``repository`` (following the registry's pages); none when it does not exist."""
        found: list[str] = []
        path: str | None = f"{repository}/tags/list"
        params: dict[str, Any] | None = {"n": 1000}
        while path is not None:
            response = self._send("GET", path, params=params)
            if response.status_code == 404:
                return found
            if response.status_code != 200:
                raise self._error(response, f"tag list of {repository}")
            found.extend(response.json().get("tags") or [])
            path, params = _next_page(response.headers.get("Link")), None
        return found

    def labels(self, repository: str, reference: str) -> dict[str, str] | None:
        """The image config's labels of a tag or digest; None when the registry has no such manifest."""
        found = self.image(repository, reference)
        return None if found is None else found[2]

    def image(self, repository: str, reference: str) -> tuple[str, str | None, dict[str, str]] | None:
        """What a tag or digest names: its manifest digest, its image config's digest (the image id a
        daemon gives it) and labels; None when the registry has no such manifest."""
        response = self._send("GET", f"{repository}/manifests/{reference}", headers=ACCEPT)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._error(response, f"manifest read of {repository}:{reference}")
        digest = response.headers.get("Docker-Content-Digest")
        digest = digest or f"sha256:{hashlib.sha256(response.content).hexdigest()}"
        config = (response.json().get("config") or {}).get("digest")
        if not isinstance(config, str):
            return str(digest), None, {}  # a manifest list or an old schema: not something rig pushed
        blob = self._send("GET", f"{repository}/blobs/{config}", follow_redirects=True)
        if blob.status_code == 404:
            return None
        if blob.status_code != 200:
            raise self._error(blob, f"image config read of {repository}:{reference}")
        try:
            labels = (json.loads(blob.content).get("config") or {}).get("Labels") or {}
        except ValueError:
            return str(digest), config, {}
        return str(digest), config, {str(key): str(value) for key, value in labels.items()}

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def diagnose_registry(registry: Registry) -> dict[str, JsonValue]:
    """What ``rig doctor`` shows of a registry: its name and URL, and whether it answers (RIG_CHECK_TIMEOUT)."""
    client = RegistryClient(registry, bound=check_bound())
    try:
        status = client.ping()
    except ProviderError as exc:
        return {"name": registry.name, "url": registry.url, "reachable": False, "error": str(exc)}
    finally:
        client.close()
    answer: dict[str, JsonValue] = {"name": registry.name, "url": registry.url, "reachable": True, "status": status}
    if status not in (200, 401):
        answer["error"] = f"{registry.url}/v2/ answered HTTP {status}: not a Docker registry (v2 API)"
    return answer


def _next_page(link: str | None) -> str | None:
    """The path after ``/v2/`` in a ``Link: </v2/...>; rel="next"`` header."""
    if not link or 'rel="next"' not in link:
        return None
    target = link.split(";", 1)[0].strip().strip("<>")
    return target.split("/v2/", 1)[1] if "/v2/" in target else None


__all__ = ["MANIFEST_TYPES", "RegistryClient", "diagnose_registry"]
