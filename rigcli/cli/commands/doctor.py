"""rig doctor: versions, paths, the project (if any), installed providers and Docker reachability."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

from rigcli._version import __version__
from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.errors import RigError

PACKAGES = ("typer", "rich", "pydantic", "sqlmodel", "httpx", "platformdirs")
DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock"
DOCKER_TIMEOUT = 2.0


def doctor(opts: GlobalOptions) -> int:
    report = collect(opts)
    if opts.json:
        emit_json(report)
        return 0
    from rigcli.render.tables import print_kv

    print_kv(_pairs(report))
    return 0


def collect(opts: GlobalOptions) -> dict[str, Any]:
    from rigcli.state.paths import default_host_storage_dir, logs_dir, rig_home

    return {
        "version": __version__,
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "platform": platform.platform(),
        "packages": {name: _version_of(name) for name in PACKAGES},
        "paths": {
            "rig_home": str(rig_home()),
            "host_storage_dir": str(default_host_storage_dir()),
            "logs_dir": str(logs_dir()),
        },
        "project": _project(opts),
        "providers": sorted({entry.name for entry in metadata.entry_points(group="rig.providers")}),
        "docker": docker_status(),
    }


def _version_of(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _project(opts: GlobalOptions) -> dict[str, Any]:
    from rigcli.discovery import find_project

    try:
        location = find_project(chdir=opts.chdir, config=opts.config, state=opts.state)
    except RigError as exc:
        return {"found": False, "message": str(exc)}
    state = location.effective_state_path
    return {
        "found": True, "project_dir": str(location.project_dir), "config_path": str(location.config_path),
        "state_path": str(state), "state_exists": state.exists(),
    }


def docker_status() -> dict[str, Any]:
    """Ask the Docker Engine for /version; never raises, never waits more than a couple of seconds."""
    host = os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_DOCKER_SOCKET}"
    try:
        import httpx

        if host.startswith("unix://"):
            socket_path = host[len("unix://"):]
            if not os.path.exists(socket_path):
                return {"host": host, "reachable": False, "error": f"no socket at {socket_path}"}
            client = httpx.Client(transport=httpx.HTTPTransport(uds=socket_path), base_url="http://docker",
                                  timeout=DOCKER_TIMEOUT)
        elif host.startswith("tcp://"):
            client = httpx.Client(base_url="http://" + host[len("tcp://"):], timeout=DOCKER_TIMEOUT)
        else:
            return {"host": host, "reachable": False, "error": "unsupported DOCKER_HOST scheme"}
        with client:
            response = client.get("/version")
            response.raise_for_status()
            data = response.json()
        return {"host": host, "reachable": True, "version": data.get("Version"), "api_version": data.get("ApiVersion")}
    except Exception as exc:  # doctor reports problems, it does not have them
        return {"host": host, "reachable": False, "error": f"{type(exc).__name__}: {exc}"}


def _pairs(report: dict[str, Any]) -> list[tuple[str, Any]]:
    project = report["project"]
    docker = report["docker"]
    if docker["reachable"]:
        docker_text = f"reachable at {docker['host']} (Docker {docker['version']}, API {docker['api_version']})"
    else:
        docker_text = f"not reachable at {docker['host']}: {docker['error']}"
    pairs: list[tuple[str, Any]] = [
        ("rig", report["version"]),
        ("python", f"{report['python']['version']} ({report['python']['executable']})"),
        ("platform", report["platform"]),
        ("packages", ", ".join(f"{name} {version or 'missing'}" for name, version in report["packages"].items())),
        ("rig home", report["paths"]["rig_home"]),
        ("host storage", report["paths"]["host_storage_dir"]),
        ("logs", report["paths"]["logs_dir"]),
    ]
    if project["found"]:
        state = project["state_path"] + ("" if project["state_exists"] else " (not created yet)")
        pairs += [("project", project["project_dir"]), ("config", project["config_path"]), ("state", state)]
    else:
        pairs.append(("project", f"none ({project['message']})"))
    pairs += [("providers", ", ".join(report["providers"]) or "none"), ("docker", docker_text)]
    return pairs


__all__ = ["collect", "docker_status", "doctor"]
