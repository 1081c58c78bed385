"""rig doctor: versions, paths, the project (if any) and its state, installed providers and Docker reachability.

The state is reported from ``StateStore.status()`` (backend, location with the password masked,
server and schema versions, lock holder), opened read-only: doctor creates and migrates nothing.

Docker is reported through the docker plugin's ``diagnose(config)`` hook (endpoint, transport,
server version or a one-line failure): once for the DOCKER_* environment, and once for each
docker provider the project defines.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcli._version import __version__
from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.errors import RigError
from rigcli.layout import is_state_url

if TYPE_CHECKING:
    from rigcli.discovery import ProjectLocation

PACKAGES = ("typer", "rich", "pydantic", "sqlmodel", "httpx", "platformdirs")
DOCKER_PROVIDER = "docker"


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
    state = _state(location)
    return {
        "found": True,
        "project_dir": str(location.project_dir),
        "config_path": str(location.config_path),
        "state_path": state["url"],
        "state_exists": state.get("exists", False),
        "state": state,
        "docker_providers": _docker_providers(location.config_path, location.project_dir),
    }


def _state(location: ProjectLocation) -> dict[str, Any]:
    """Backend, masked location, server and schema versions, lock holder; creates and waits for nothing."""
    from rigcli.config_loader import load_dotenv_file
    from rigcli.state.factory import open_state_store, resolve_state_location
    from rigcli.state.postgres.url import mask_url

    load_dotenv_file(location.project_dir)  # RIG_STATE_URL may live in the project's .env
    given = location.state_location
    where = resolve_state_location(str(location.project_dir), None if given is None else str(given))
    shown = mask_url(where) if where and is_state_url(where) else str(where or location.effective_state_path)
    backend = "postgresql" if where and is_state_url(where) else "sqlite"
    try:
        store = open_state_store(None, project_dir=str(location.project_dir), state_path=where, read_only=True)
        try:
            status: dict[str, Any] = store.status().to_json()
        finally:
            store.close()
    except RigError as exc:
        return {"backend": backend, "url": shown, "error": str(exc)}
    return status


def _state_text(state: dict[str, Any]) -> list[tuple[str, str]]:
    from rigcli.records import describe_holder

    if state.get("error"):
        return [("state", f"{state['url']} ({state['backend']}): {state['error']}")]
    server = f"PostgreSQL {state['server_version']}" if state["backend"] == "postgresql" else "SQLite"
    version = f"schema version {state['schema_version']}" if state["exists"] else "not created yet"
    lock = state.get("lock")
    holder = describe_holder(lock) if lock else "free"
    return [("state", f"{state['url']} ({server}, {version})"), ("state lock", holder)]


def _docker_plugin() -> Any:
    for entry in metadata.entry_points(group="rig.providers"):
        if entry.name == DOCKER_PROVIDER:
            return entry.load()
    return None


def _diagnose(config: dict[str, Any]) -> dict[str, Any]:
    """The docker plugin's report for ``config``; doctor reports problems, it does not have them."""
    host = config.get("host") or os.environ.get("DOCKER_HOST")
    try:
        diagnose = getattr(_docker_plugin(), "diagnose", None)
        if diagnose is None:
            return {"host": host, "reachable": False, "error": "the docker provider is not installed"}
        report: dict[str, Any] = diagnose(config)
        return report
    except Exception as exc:
        return {"host": host, "reachable": False, "error": f"{type(exc).__name__}: {exc}"}


def _docker_providers(config_path: Path, project_dir: Path) -> list[dict[str, Any]] | dict[str, str]:
    """Each docker provider the project's workflows use (by scope name), diagnosed with its resolved config."""
    from rigcli.config_loader import load_config
    from rigcli.graph import compile_workflow

    try:
        loaded = load_config(config_path, project_dir)
        found: dict[int, tuple[str, Any]] = {}
        for root in loaded.workflows:
            compiled = compile_workflow(root, loaded.providers, lambda fragment: "")
            for scope in [compiled.root_providers, *compiled.all_scopes()]:
                for name, definition in scope.items():
                    if definition.provider_id == DOCKER_PROVIDER:
                        found.setdefault(id(definition), (name, definition))
        configs = [(name, definition.resolve_config()) for name, definition in found.values()]
    except Exception as exc:  # a broken rig_config.py is reported by the commands that run it
        return {"error": f"could not read the project's providers: {exc}"}
    return [{"name": name, **_diagnose(config)} for name, config in configs]


def docker_status() -> dict[str, Any]:
    """The daemon DOCKER_HOST/DOCKER_TLS_VERIFY/DOCKER_CERT_PATH point at; never raises, waits a few seconds at most."""
    return _diagnose({})


def _docker_text(docker: dict[str, Any]) -> str:
    where = f"{docker.get('host')} ({docker['transport']})" if docker.get("transport") else str(docker.get("host"))
    if docker.get("reachable"):
        return f"{where}, Docker {docker.get('version')}, API {docker.get('api_version')}"
    return f"not reachable: {docker.get('error')}"


def _pairs(report: dict[str, Any]) -> list[tuple[str, Any]]:
    project = report["project"]
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
        pairs += [("project", project["project_dir"]), ("config", project["config_path"])]
        pairs += _state_text(project["state"])
    else:
        pairs.append(("project", f"none ({project['message']})"))
    pairs += [("providers", ", ".join(report["providers"]) or "none"), ("docker", _docker_text(report["docker"]))]
    providers = project.get("docker_providers") or []
    if isinstance(providers, dict):
        pairs.append(("docker providers", providers["error"]))
    for item in providers if isinstance(providers, list) else []:
        pairs.append((f"docker provider {item['name']}", _docker_text(item)))
    return pairs


__all__ = ["collect", "docker_status", "doctor"]
