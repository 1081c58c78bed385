"""rig doctor: versions, paths, the project (if any) and its state, installed providers and what each says of itself.

Providers are reported through the engine (``Engine.diagnose`` for the project's, and
``engine.diagnosis`` for the installed ones), which asks each plugin that supports diagnosis
(``SupportsDiagnosis``): doctor knows no provider by name. Such a provider adds a key of its id
(its defaults, e.g. the daemon the environment points at) and, inside a project,
``<id>_providers``: one entry per definition the workflows use, by scope name. The state comes
from ``StateStore.status()`` (backend, masked location, versions, lock holder), opened
read-only: doctor creates and migrates nothing. A ``rig_config.py`` that fails to load is shown
(``file:line`` and the error) and makes doctor exit 1.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import TYPE_CHECKING, Any

from rigcli._version import __version__
from rigcli.cli.output import emit_json
from rigcli.cli.session import GlobalOptions
from rigcli.discovery import find_project
from rigcli.engine import create_engine
from rigcli.engine.diagnosis import diagnose_defaults, installed_plugins
from rigcli.errors import ConfigError, RigError
from rigcli.records import describe_holder
from rigcli.render.tables import print_kv
from rigcli.speed.records import lazy_dataclass
from rigcli.state.paths import default_host_storage_dir, logs_dir, rig_home

if TYPE_CHECKING:
    from rigcli.engine.results import ProjectDiagnosis
    from rigcli.provider_api import ProviderDiagnosis

PACKAGES = ("typer", "rich", "pydantic", "httpx", "platformdirs")


@lazy_dataclass(frozen=True)
class Report:
    """What doctor found: this installation, each installed provider's defaults, and the project."""

    installation: dict[str, Any]
    providers: list[str]  # installed (rig.providers entry points)
    defaults: dict[str, ProviderDiagnosis]  # by provider id, for those that diagnose themselves
    project: ProjectDiagnosis | None
    no_project: str = ""  # why there is none

    def to_json(self) -> dict[str, Any]:
        data = {**self.installation, "project": self._project_json(), "providers": self.providers}
        for provider_id, diagnosis in self.defaults.items():
            data.setdefault(provider_id, dict(diagnosis.details))  # never in place of doctor's own keys
        return data

    def _project_json(self) -> dict[str, Any]:
        if self.project is None:
            return {"found": False, "message": self.no_project}
        state = self.project.state
        data: dict[str, Any] = {
            "found": True,
            "project_dir": self.project.project_dir,
            "config_path": self.project.config_path,
            "state_path": state["url"],
            "state_exists": state.get("exists", False),
            "state": state,
        }
        if self.project.providers_error is not None:
            data["providers_error"] = self.project.providers_error
        if self.project.config_error is not None:
            data["config_error"] = self.project.config_error
        for item in self.project.providers:
            entries = data.setdefault(f"{item.provider_id}_providers", [])
            entries.append({"name": item.name, **item.diagnosis.details})
        return data

    def pairs(self) -> list[tuple[str, Any]]:
        info = self.installation
        pairs: list[tuple[str, Any]] = [
            ("rig", info["version"]),
            ("python", f"{info['python']['version']} ({info['python']['executable']})"),
            ("platform", info["platform"]),
            ("packages", ", ".join(f"{name} {version or 'missing'}" for name, version in info["packages"].items())),
            ("rig home", info["paths"]["rig_home"]),
            ("host storage", info["paths"]["host_storage_dir"]),
            ("logs", info["paths"]["logs_dir"]),
        ]
        project = self.project
        if project is not None:
            pairs += [("project", project.project_dir), ("config", project.config_path)]
            pairs += _state_text(project.state)
        else:
            pairs.append(("project", f"none ({self.no_project})"))
        pairs.append(("providers", ", ".join(self.providers) or "none"))
        pairs += [(provider_id, diagnosis.summary) for provider_id, diagnosis in self._shown_defaults().items()]
        if project is not None and project.providers_error is not None:
            pairs.append(("project providers", project.providers_error))
        for item in project.providers if project is not None else []:
            pairs.append((f"{item.provider_id} provider {item.name}", item.diagnosis.summary))
        return pairs

    def _shown_defaults(self) -> dict[str, ProviderDiagnosis]:
        """The installed providers' own lines a person reads: inside a project whose providers are known,
        only those it uses (another's unreachable daemon is not this project's problem); --json keeps all."""
        project = self.project
        if project is None or project.providers_error is not None:
            return self.defaults
        used = {item.provider_id for item in project.providers}
        return {provider_id: found for provider_id, found in self.defaults.items() if provider_id in used}


def doctor(opts: GlobalOptions) -> int:
    report = collect(opts)
    if opts.json:
        emit_json(report.to_json())
    else:
        print_kv(report.pairs())
    if report.project is not None and report.project.config_error is not None:
        raise ConfigError(report.project.config_error)  # the report shown, a broken config fails doctor
    return 0


def collect(opts: GlobalOptions) -> Report:
    installation = {
        "version": __version__,
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "platform": platform.platform(),
        "packages": {name: _version_of(name) for name in PACKAGES},
        "paths": {
            "rig_home": str(rig_home()),
            "host_storage_dir": str(default_host_storage_dir()),
            "logs_dir": str(logs_dir()),
        },
    }
    plugins = installed_plugins()
    try:
        location = find_project(chdir=opts.chdir, config=opts.config, state=opts.state)
    except RigError as exc:
        return Report(installation, plugins.installed(), diagnose_defaults(plugins), None, str(exc))
    # The --state as given: the engine's diagnosis resolves it and reports one it cannot use.
    engine = create_engine(location.project_dir, config_path=location.config_path, state_path=location.state_given)
    try:
        project = engine.diagnosis.diagnose()
    finally:
        engine.close()
    return Report(installation, plugins.installed(), diagnose_defaults(plugins), project)


def _version_of(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _state_text(state: dict[str, Any]) -> list[tuple[str, str]]:
    if state.get("error"):
        backend = f" ({state['backend']})" if state["backend"] else ""
        return [("state", f"{state['url']}{backend}: {state['error']}")]
    if state.get("damaged"):
        advice = "rig will not write to it; see `rig state check`, and `rig state recover` to salvage it"
        return [("state", f"{state['url']} is DAMAGED ({state['damaged']}); {advice}")]
    server = f"PostgreSQL {state['server_version']}" if state["backend"] == "postgresql" else "SQLite"
    version = f"schema version {state['schema_version']}" if state["exists"] else "not created yet"
    lock = state.get("lock")
    holder = describe_holder(lock) if lock else "free"
    return [("state", f"{state['url']} ({server}, {version})"), ("state lock", holder)]


__all__ = ["Report", "collect", "doctor"]
