"""Docker Engine or Podman behind the Docker API: `rig doctor` names which one serves each docker provider."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from e2e_support import Rig, rig_env


def test_doctor_names_the_engine_and_its_version_for_each_docker_provider(
    docker_daemons: Callable[[str], Any], tmp_path: Path
) -> None:
    docker, podman = docker_daemons("unix"), docker_daemons("podman")
    # Each engine's own account of its version, from an endpoint only it has.
    docker_version = docker.api.get("/v1.41/info").json()["ServerVersion"]
    podman_version = podman.api.get("/v4.0.0/libpod/info").json()["version"]["Version"]
    project = tmp_path / "engines"
    project.mkdir()
    (project / "rig_config.py").write_text(
        "from rigcli import define_provider, workflow\n"
        "app = workflow('w', providers={\n"
        f"    'dockerd': define_provider('docker', host={docker.host!r}),\n"
        f"    'podman': define_provider('docker', host={podman.host!r}),\n"
        "})\n"
        "workflows = app.sequence('root').task('noop', lambda: None)\n"
    )
    rig = Rig(project, rig_env(tmp_path))

    found = {item["name"]: item for item in rig.json("doctor")["project"]["docker_providers"]}

    assert (found["dockerd"]["engine"], found["dockerd"]["engine_version"]) == ("Docker Engine", docker_version)
    assert (found["podman"]["engine"], found["podman"]["engine_version"]) == ("Podman", podman_version)
    assert found["podman"]["reachable"] is True and found["podman"]["api_version"] == "1.41"
    text = rig.run("doctor").stdout
    assert f"{docker.host} (unix socket), Docker Engine {docker_version}, API" in text
    assert f"{podman.host} (unix socket), Podman {podman_version}, API 1.41" in text
