"""The daemons the docker tests run against: the unix socket, tcp with mutual TLS, and the same daemon over ssh.

The remote ones come from ``.ci/docker-remote.sh`` (``docker_remote_start``), which exports
RIG_TEST_DOCKER_TLS_HOST, RIG_TEST_DOCKER_CERT_PATH and RIG_TEST_DOCKER_SSH_HOST. Each endpoint
is described the way a docker CLI user points at it: DOCKER_HOST, DOCKER_TLS_VERIFY and
DOCKER_CERT_PATH. Tests check what the provider did through a direct API client on the daemon
(TLS for the remote daemon, whichever way the provider reached it).
"""

from __future__ import annotations

import json
import os
import ssl
from dataclasses import dataclass, field
from typing import Any

import httpx

ENDPOINTS = ("unix", "tls", "ssh")
START_HINT = "start them with: source .ci/docker-remote.sh && docker_remote_start"


class Unavailable(Exception):
    """This endpoint cannot be tested here; the message says why."""


@dataclass(frozen=True)
class EndpointDaemon:
    """What the docker fixtures yield: the daemon as the provider reaches it, plus a checking client."""

    host: str
    image: str
    api: Any  # an httpx.Client on the daemon itself, for checking what the provider did
    endpoint: str = "unix"
    env: dict[str, str | None] = field(default_factory=dict)  # None: unset this variable


def tls_settings() -> tuple[str, str]:
    host, certs = os.environ.get("RIG_TEST_DOCKER_TLS_HOST"), os.environ.get("RIG_TEST_DOCKER_CERT_PATH")
    if not host or not certs:
        raise Unavailable(f"RIG_TEST_DOCKER_TLS_HOST/RIG_TEST_DOCKER_CERT_PATH are not set ({START_HINT})")
    return host, certs


def ssh_host() -> str:
    host = os.environ.get("RIG_TEST_DOCKER_SSH_HOST")
    if not host:
        raise Unavailable(f"RIG_TEST_DOCKER_SSH_HOST is not set ({START_HINT})")
    return host


def tls_client(host: str, certs: str, timeout: float = 30.0) -> httpx.Client:
    context = ssl.create_default_context(cafile=os.path.join(certs, "ca.pem"))
    context.load_cert_chain(os.path.join(certs, "cert.pem"), os.path.join(certs, "key.pem"))
    return httpx.Client(base_url="https://" + host[len("tcp://") :], verify=context, timeout=timeout)


def unix_client(host: str) -> httpx.Client:
    transport = httpx.HTTPTransport(uds=host[len("unix://") :])
    return httpx.Client(transport=transport, base_url="http://docker", timeout=30.0)


def connect(endpoint: str, image: str) -> EndpointDaemon:
    """The daemon behind ``endpoint``, checked to answer and to hold ``image``; raises Unavailable."""
    from providers.docker.client import resolve_host

    unset: dict[str, str | None] = {"DOCKER_TLS_VERIFY": None, "DOCKER_CERT_PATH": None}
    if endpoint == "unix":
        host = resolve_host()
        if not host.startswith("unix://"):
            raise Unavailable(f"the unix endpoint needs DOCKER_HOST=unix://..., not {host}")
        api, env = unix_client(host), {**unset, "DOCKER_HOST": host}
    elif endpoint == "tls":
        host, certs = tls_settings()
        api, env = tls_client(host, certs), {"DOCKER_HOST": host, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certs}
    else:
        host = ssh_host()
        api, env = tls_client(*tls_settings()), {**unset, "DOCKER_HOST": host}
    try:
        api.get("/version", timeout=5).raise_for_status()
    except (httpx.HTTPError, OSError) as exc:
        api.close()
        raise Unavailable(f"no Docker daemon answers for the {endpoint} endpoint {host} ({exc})") from None
    if api.get(f"/images/{image}/json").status_code != 200:
        api.close()
        raise Unavailable(f"the test image {image} is missing on the {endpoint} endpoint's daemon")
    return EndpointDaemon(host, image, api, endpoint, env)


def point_environment(monkeypatch: Any, daemon: EndpointDaemon) -> None:
    """Set DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH for ``daemon`` (undone after the test)."""
    for key, value in daemon.env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)


def remove_project_resources(api: httpx.Client, project: Any, controller: Any) -> None:
    """Remove the containers labelled with ``project`` and the snapshots ``controller`` recorded; close it."""
    labels = json.dumps({"label": [f"rig.project={project}"]})
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for snapshot in controller.list_snapshots():
        api.delete(f"/images/{snapshot['image_id']}", params={"force": "true"})
    controller.close()


def ssh_processes(host: str) -> list[int]:
    """Pids of ssh clients running ``docker system dial-stdio`` for ``host`` (an ssh:// URL), on this machine."""
    target = host[len("ssh://") :].rpartition("@")[2].split(":")[0].encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[0].endswith(b"ssh") and b"dial-stdio" in argv and target in argv and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


__all__ = [
    "ENDPOINTS",
    "EndpointDaemon",
    "Unavailable",
    "connect",
    "point_environment",
    "remove_project_resources",
    "ssh_processes",
    "tls_client",
    "tls_settings",
]
