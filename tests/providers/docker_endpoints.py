"""The daemons the docker tests run against: the unix socket, tcp with mutual TLS, the same daemon over ssh, and Podman.

The remote ones come from ``.ci/docker-remote.sh`` (``docker_remote_start``), which exports
RIG_TEST_DOCKER_TLS_HOST, RIG_TEST_DOCKER_CERT_PATH and RIG_TEST_DOCKER_SSH_HOST; Podman's
Docker-compatible service comes from ``.ci/podman.sh`` (``podman_ci_start``), which exports
RIG_TEST_PODMAN_HOST. A missing docker endpoint fails under RIG_REQUIRE_DOCKER=1, a missing
Podman under RIG_REQUIRE_PODMAN=1; otherwise they skip. Each endpoint
is described the way a docker CLI user points at it: DOCKER_HOST, DOCKER_TLS_VERIFY and
DOCKER_CERT_PATH. Tests check what the provider did through a direct API client on the daemon
(TLS for the remote daemon, whichever way the provider reached it).
"""

from __future__ import annotations

import json
import os
import signal
import ssl
from dataclasses import dataclass, field
from typing import Any

import httpx

ENDPOINTS = ("unix", "tls", "ssh", "podman")
START_HINT = "start them with: source .ci/docker-remote.sh && docker_remote_start"
PODMAN_HINT = "start it with: source .ci/podman.sh && podman_ci_start"


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

    @property
    def podman(self) -> bool:
        return self.endpoint == "podman"


def required_variable(endpoint: str) -> str:
    """The variable that turns this endpoint's skips into failures (set by .ci/run)."""
    return "RIG_REQUIRE_PODMAN" if endpoint == "podman" else "RIG_REQUIRE_DOCKER"


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
    elif endpoint == "podman":
        host = os.environ.get("RIG_TEST_PODMAN_HOST", "")
        if not host.startswith("unix://"):
            raise Unavailable(f"RIG_TEST_PODMAN_HOST is not set to a unix:// socket ({PODMAN_HINT})")
        api, env = unix_client(host), {**unset, "DOCKER_HOST": host}
    else:
        host = ssh_host()
        api, env = tls_client(*tls_settings()), {**unset, "DOCKER_HOST": host}
    try:
        # Generous: a daemon that is not there fails at once; Podman's /version runs conmon and the
        # runtime to report their versions, which takes seconds on a loaded CI machine.
        api.get("/version", timeout=30).raise_for_status()
    except (httpx.HTTPError, OSError) as exc:
        api.close()
        raise Unavailable(f"no Docker daemon answers for the {endpoint} endpoint {host} ({exc})") from None
    if api.get(f"/images/{image}/json").status_code != 200:
        api.close()
        raise Unavailable(f"the test image {image} is missing on the {endpoint} endpoint's daemon")
    daemon = EndpointDaemon(host, image, api, endpoint, env)
    if daemon.podman:
        _PODMAN.append(daemon)
    return daemon


_PODMAN: list[EndpointDaemon] = []  # connected in this process: their leftover conmons are reaped after each test


def connected_podman() -> list[EndpointDaemon]:
    return [daemon for daemon in _PODMAN if not daemon.api.is_closed]


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


def podman_conmons(host: str) -> dict[int, str]:
    """pid -> container id of each live ``conmon`` on this machine serving the Podman service at ``host``.

    A conmon is told apart by the service's directory in its command line: .ci/podman.sh keeps
    the storage beside the socket. Each container and each exec session has its own.
    """
    marker = (os.path.dirname(host[len("unix://") :]) + "/").encode()
    found = {}
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
        ours = argv[0].endswith(b"conmon") and b"-c" in argv and any(marker in arg for arg in argv)
        if ours and state not in (b"Z", b"X"):
            found[int(name)] = argv[argv.index(b"-c") + 1].decode()
    return found


def reap_podman_exec_sessions(daemon: EndpointDaemon) -> list[int]:
    """SIGKILL the conmons Podman keeps for exec sessions of containers that no longer exist; their pids.

    Podman's compat exec keeps each session's conmon for ``exit_command_delay`` (300 s by default)
    after the command ended, to run ``podman container cleanup --exec`` then, even when the
    container was removed long before; it ignores SIGTERM while it waits. Removing a container
    through the API does not end them, so the tests' teardown does, by PID.
    """
    gone: dict[str, bool] = {}
    killed = []
    for pid, container in podman_conmons(daemon.host).items():
        if container not in gone:
            gone[container] = daemon.api.get(f"/containers/{container}/json").status_code == 404
        if gone[container]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            killed.append(pid)
    return killed


def ssh_processes(host: str) -> list[int]:
    """Pids of ssh clients running ``docker system dial-stdio`` for ``host`` (an ssh:// URL; its port too,
    when it names one), on this machine."""
    target, _, port = host[len("ssh://") :].rpartition("@")[2].partition(":")
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
        ours = target.encode() in argv and (not port or port.encode() in argv)
        if argv[0].endswith(b"ssh") and b"dial-stdio" in argv and ours and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


__all__ = [
    "ENDPOINTS",
    "EndpointDaemon",
    "Unavailable",
    "connect",
    "connected_podman",
    "podman_conmons",
    "point_environment",
    "reap_podman_exec_sessions",
    "remove_project_resources",
    "required_variable",
    "ssh_processes",
    "tls_client",
    "tls_settings",
]
