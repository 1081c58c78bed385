"""A private Docker registry (Debian's ``docker-registry``, the v2 reference) on 127.0.0.1, stopped by PID.

Both test daemons reach it as ``127.0.0.1:<port>``: the unix-socket dockerd and the TLS one of
``.ci/docker-remote.sh`` run in the host's network namespace, and dockerd speaks plain HTTP to a
registry on 127.0.0.0/8 without being told (its default insecure range). ``deletes`` turns the
registry's ``storage.delete.enabled`` on or off.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

MANIFEST_TYPES = "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json"
START_SECONDS = 15.0


class Unavailable(Exception):
    """The registry cannot run here; the message says why."""


@dataclass
class Registry:
    name: str  # 127.0.0.1:<port>, as image references start
    process: subprocess.Popen[bytes]
    root: Path

    @property
    def url(self) -> str:
        return f"http://{self.name}"

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return httpx.get(f"{self.url}/v2/{path}", timeout=10, **kwargs)  # type: ignore[arg-type]

    def repositories(self) -> list[str]:
        return list(self.get("_catalog").json().get("repositories") or [])

    def tags(self, repository: str) -> list[str]:
        response = self.get(f"{repository}/tags/list")
        return [] if response.status_code == 404 else list(response.json().get("tags") or [])

    def digest(self, repository: str, reference: str) -> str | None:
        response = httpx.head(
            f"{self.url}/v2/{repository}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}, timeout=10
        )
        return None if response.status_code == 404 else str(response.headers["Docker-Content-Digest"])

    def delete(self, repository: str, digest: str) -> int:
        return httpx.delete(f"{self.url}/v2/{repository}/manifests/{digest}", timeout=10).status_code

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(root: Path, *, deletes: bool = True) -> Registry:
    """A new registry storing under ``root``; raises Unavailable when ``docker-registry`` is missing."""
    binary = shutil.which("docker-registry")
    if binary is None:
        raise Unavailable("docker-registry is not installed (apt-get install docker-registry)")
    port = _free_port()
    root.mkdir(parents=True, exist_ok=True)
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        f"  delete:\n    enabled: {'true' if deletes else 'false'}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n",
        encoding="utf-8",
    )
    log = open(root / "registry.log", "wb")  # noqa: SIM115 - the child keeps it; closed below
    try:
        process = subprocess.Popen([binary, "serve", str(config)], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    finally:
        log.close()
    registry = Registry(f"127.0.0.1:{port}", process, root)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(f"{registry.url}/v2/", timeout=1).status_code == 200:
                return registry
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    said = (root / "registry.log").read_text(errors="replace")
    registry.stop()
    raise Unavailable(f"docker-registry did not answer on {registry.url}: {said!r}")


__all__ = ["Registry", "Unavailable", "start"]
