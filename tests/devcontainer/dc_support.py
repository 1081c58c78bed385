"""Dev container projects in a temp dir, the installed ``rig`` run in them, the test daemon, and cleanup."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.cli_support import RIG

IMAGE = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")


def docker_api() -> Iterator[httpx.Client]:
    """The test daemon (DOCKER_HOST, a unix socket) with the test image; skips without one unless
    RIG_REQUIRE_DOCKER=1, which makes that a failure."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    required = os.environ.get("RIG_REQUIRE_DOCKER") == "1"

    def unavailable(reason: str) -> None:
        if required:
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)

    if not host.startswith("unix://"):
        unavailable(f"these tests drive a unix-socket daemon, and DOCKER_HOST is {host}")
    client = httpx.Client(
        transport=httpx.HTTPTransport(uds=host[len("unix://") :]), base_url="http://docker", timeout=60
    )
    try:
        if client.get(f"/images/{IMAGE}/json").status_code != 200:
            unavailable(f"the test image {IMAGE} is missing")
    except httpx.HTTPError as exc:
        unavailable(f"no Docker daemon at {host} ({exc})")
    yield client
    client.close()


def write_project(root: Path, config: Mapping[str, Any] | str, files: Mapping[str, str] | None = None) -> Path:
    """A project whose ``.devcontainer/devcontainer.json`` is ``config`` (JSON, or JSONC text as given)."""
    root.mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    for name, content in {".devcontainer/devcontainer.json": text, **(files or {})}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        if name.endswith(".sh"):
            path.chmod(0o755)
    return root


class Rig:
    """The installed ``rig`` in one project, with its own RIG_HOME."""

    def __init__(self, project: Path, home: Path, **env: str) -> None:
        self.project = project
        # rig's own settings are the test's; the daemon's test image is the configurations' too.
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("RIG_")}
        self.env["RIG_TEST_DOCKER_IMAGE"] = IMAGE
        self.env.update(
            {
                "RIG_HOME": str(home),
                "RIG_HOST_STORAGE_DIR": str(home / "providers"),
                "RIG_RENDER": "0",
                "RIG_NO_BROWSER": "1",
                "NO_COLOR": "1",
                **env,
            }
        )

    def run(self, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [RIG, *args],
            cwd=self.project,
            env=self.env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if check:
            assert done.returncode == 0, f"rig {' '.join(args)} exited {done.returncode}: {done.stderr}"
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run("--json", *args).stdout)

    def exec(self, workspace: str, script: str) -> str:
        return self.run("exec", workspace, "--", "sh", "-c", script).stdout

    def plan(self) -> dict[str, tuple[str, str]]:
        found = self.json("plan")
        return {node["path"]: (node["status"], node["reason"]["code"]) for node in found["nodes"]}


def remove_made_for(api: httpx.Client, project: Path) -> None:
    """Every container and image rig made for ``project`` on the daemon, removed."""
    labels = json.dumps({"label": [f"rig.project={project}"]})
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true", "v": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


__all__ = ["IMAGE", "Rig", "docker_api", "remove_made_for", "write_project"]
