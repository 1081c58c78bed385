"""The Engine API version: spoken without a /version round trip, negotiated when a daemon refuses it."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from docker_endpoints import tls_settings

from providers.docker.client import API_VERSION, DockerClient
from providers.docker.endpoint import resolve_endpoint
from providers.docker.rawhttp import RawClient
from rigcli.errors import ProviderError
from rigcli.timeouts import Bound


def _watched(client: DockerClient) -> list[str]:
    """The paths of the requests ``client`` sends from now on."""
    seen: list[str] = []
    client._http().event_hooks["request"] = [lambda request: seen.append(request.url.path)]
    return seen


def _image_id(docker_daemon: Any) -> str:
    return str(docker_daemon.api.get(f"/images/{docker_daemon.image}/json").json()["Id"])


def test_the_first_request_is_sent_in_our_version_without_asking_first(docker_daemon: Any) -> None:
    image = _image_id(docker_daemon)
    client = DockerClient()  # DOCKER_HOST and friends point at this endpoint's daemon
    try:
        seen = _watched(client)
        assert client.json("GET", f"/images/{image}/json")["Id"] == image
        assert seen == [f"/v{API_VERSION}/images/{image}/json"]
    finally:
        client.close()


def test_a_daemon_that_refuses_our_version_is_asked_for_its_own_and_the_request_sent_again(
    docker_daemon: Any,
) -> None:
    image = _image_id(docker_daemon)
    client = DockerClient(api_version="1.99")  # newer than any daemon: refused with HTTP 400
    try:
        seen = _watched(client)
        assert client.json("GET", f"/images/{image}/json")["Id"] == image
        server = str(client.server_info()["ApiVersion"])
        assert client.api_version == server
        if docker_daemon.podman:  # Podman serves any version asked for: nothing is refused, nothing sent twice
            assert seen == ["/v1.99/images/" + image + "/json", "/version"]
            return
        assert seen == ["/v1.99/images/" + image + "/json", "/version", f"/v{server}/images/{image}/json"]
        # A refused create made nothing: the one sent again is the only container.
        created = client.request(
            "POST", "/containers/create", json={"Image": image, "Cmd": ["true"], "Labels": {"rig.test": "api"}}
        ).json()["Id"]
        assert client.request("DELETE", f"/containers/{created}").status_code == 204
    finally:
        client.close()


def test_a_genuine_bad_request_is_not_sent_twice(docker_daemon: Any) -> None:
    client = DockerClient()
    try:
        seen = _watched(client)
        if docker_daemon.podman:  # Podman answers a bad request with HTTP 500: nothing to negotiate
            with pytest.raises(ProviderError, match=r"HTTP 500"):
                client.request("POST", "/containers/create", json={"Image": ""}, what="container create")
            assert seen == [f"/v{API_VERSION}/containers/create"]
            return
        with pytest.raises(ProviderError, match=r"HTTP 400"):
            client.request("POST", "/containers/create", json={"Image": ""}, what="container create")
        assert seen == [f"/v{API_VERSION}/containers/create", "/version"]
    finally:
        client.close()


def test_plain_http_to_a_tls_daemon_is_one_clear_line(docker_daemons: Callable[[str], Any]) -> None:
    docker_daemons("tls")  # skips without the TLS daemon (fails under RIG_REQUIRE_DOCKER=1)
    host, _certs = tls_settings()
    client = DockerClient(resolve_endpoint({"host": host, "tls_verify": False}))
    try:
        with pytest.raises(ProviderError, match=r"expects TLS and was spoken to without it"):
            client.json("GET", "/images/json")
    finally:
        client.close()


TOO_NEW = "client version 1.41 is too new. Maximum supported API version is 1.40"


class _OldDaemon(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Speaks API 1.40 only, as a daemon older than Docker 20.10 does: a request in 1.41 is refused with HTTP 400."""

    daemon_threads = True
    seen: list[str]


class _OldDaemonHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        while True:
            line = self.rfile.readline().decode()
            if not line:
                return
            target = line.split()[1]
            while self.rfile.readline() not in (b"\r\n", b""):
                pass  # the headers: no request here has a body
            self.server.seen.append(target)  # type: ignore[attr-defined]
            if target == "/version":
                status, body = "200 OK", '{"ApiVersion": "1.40"}'
            elif target.startswith("/v1.40/"):
                status, body = "200 OK", '"OK"'
            else:
                status, body = (
                    "400 Bad Request",
                    '{"message": "client version 1.41 is too new. Maximum supported API version is 1.40"}',
                )
            self.wfile.write(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())


def test_rigs_own_connection_speaks_an_older_daemons_version_once_refused(tmp_path: Path) -> None:
    """The raw client (plan's check, probe, exec) negotiates down as the httpx client does."""
    path = str(tmp_path / "old.sock")
    server = _OldDaemon(path, _OldDaemonHandler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    raw = RawClient(resolve_endpoint({"host": f"unix://{path}"}))
    try:
        response = raw.request("GET", "/_ping", bound=Bound(5.0, "RIG_CHECK_TIMEOUT"))
        assert (response.status, raw.version) == (200, "1.40")
        assert server.seen == [f"/v{API_VERSION}/_ping", "/version", "/v1.40/_ping"]
    finally:
        raw.close()
        server.shutdown()
        server.server_close()
