"""The Engine API version: spoken without a /version round trip, negotiated when a daemon refuses it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from docker_endpoints import tls_settings

from providers.docker.client import API_VERSION, DockerClient
from providers.docker.endpoint import resolve_endpoint
from rigcli.errors import ProviderError


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
