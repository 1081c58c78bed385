"""A small Docker Engine API client over httpx: DOCKER_HOST, version negotiation, clear errors."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

from rigcli.errors import ProviderError

DEFAULT_HOST = "unix:///var/run/docker.sock"
API_VERSION = "1.41"  # the newest API whose fields we use; Debian's docker.io 20.10 speaks exactly this
MIN_API_VERSION = "1.24"


def _version_tuple(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return (0,)


def negotiate(server_version: str | None, ours: str = API_VERSION) -> str:
    """The API version to speak: min(server's, ours); an unversioned server is asked for ours."""
    if not server_version:
        return ours
    return min(server_version, ours, key=_version_tuple)


def resolve_host(configured: str | None = None) -> str:
    return configured or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


class DockerClient:
    """One connection pool to one daemon; thread-safe (exec streams read on worker threads)."""

    def __init__(self, host: str | None = None) -> None:
        self.host = resolve_host(host)
        self._client: httpx.Client | None = None
        self._version: str | None = None
        self._lock = threading.Lock()

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> httpx.Client:
        timeout = httpx.Timeout(connect=10.0, read=600.0, write=600.0, pool=30.0)
        if self.host.startswith("unix://"):
            transport = httpx.HTTPTransport(uds=self.host[len("unix://"):])
            return httpx.Client(transport=transport, base_url="http://docker", timeout=timeout)
        if self.host.startswith(("tcp://", "http://")):
            base = "http://" + self.host.split("://", 1)[1]
            return httpx.Client(base_url=base, timeout=timeout)
        raise ProviderError(
            f"DOCKER_HOST {self.host} is not supported by the docker provider (use unix:// or tcp://)"
        )

    def unreachable(self, exc: Exception) -> ProviderError:
        reason = str(exc).strip() or type(exc).__name__
        return ProviderError(f"Cannot reach the Docker daemon at {self.host} ({reason}); is dockerd running?")

    @property
    def api_version(self) -> str:
        if self._version is None:
            info = self._send("GET", "/version", versioned=False)
            if info.status_code != 200:
                raise ProviderError(f"Docker daemon at {self.host} answered /version with HTTP {info.status_code}")
            server = info.json().get("ApiVersion")
            version = negotiate(server if isinstance(server, str) else None)
            if _version_tuple(version) < _version_tuple(MIN_API_VERSION):
                raise ProviderError(f"Docker daemon at {self.host} speaks API {version}; rig needs {MIN_API_VERSION}+")
            self._version = version
        return self._version

    def _url(self, path: str, versioned: bool) -> str:
        return f"/v{self.api_version}{path}" if versioned else path

    def _send(self, method: str, path: str, *, versioned: bool = True, **kwargs: Any) -> httpx.Response:
        try:
            return self._http().request(method, self._url(path, versioned), **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout, FileNotFoundError, ConnectionError) as exc:
            raise self.unreachable(exc) from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"Docker request {method} {path} failed: {exc}") from None

    def request(
        self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201, 204), what: str | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """Send a request; a status outside ``ok`` becomes a ProviderError quoting the daemon."""
        response = self._send(method, path, **kwargs)
        if response.status_code not in ok:
            raise self.error(response, what or f"{method} {path}")
        return response

    def error(self, response: httpx.Response, what: str) -> ProviderError:
        return ProviderError(f"Docker {what} failed: {daemon_message(response)} (HTTP {response.status_code})")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    @contextmanager
    def stream(self, method: str, path: str, *, body: Mapping[str, Any]) -> Iterator[httpx.Response]:
        """A response whose body is read as it arrives (no read timeout: commands may be quiet)."""
        timeout = httpx.Timeout(connect=10.0, read=None, write=60.0, pool=30.0)
        try:
            with self._http().stream(
                method, self._url(path, True), content=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"}, timeout=timeout,
            ) as response:
                yield response
        except (httpx.ConnectError, httpx.ConnectTimeout, FileNotFoundError, ConnectionError) as exc:
            raise self.unreachable(exc) from None

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def daemon_message(response: httpx.Response) -> str:
    try:
        response.read()
        message = response.json().get("message")
    except (ValueError, AttributeError, httpx.HTTPError):
        message = None
    return str(message or response.text.strip() or response.reason_phrase).strip()


__all__ = ["API_VERSION", "DEFAULT_HOST", "DockerClient", "daemon_message", "negotiate", "resolve_host"]
