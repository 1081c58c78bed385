"""``rig doctor``'s view: the project's state and each provider's own diagnosis, never by name.

Nothing here creates, migrates or locks the state, and a broken ``rig_config.py`` is reported,
not raised: doctor reports problems, it does not have them. Providers speak for themselves
through the optional ``SupportsDiagnosis`` hook of their plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from rigcli.authoring.values import ProviderDefinition
from rigcli.engine.project import Project
from rigcli.engine.providers import Plugins
from rigcli.engine.results import ConfiguredProvider, ProjectDiagnosis
from rigcli.errors import ConfigError, RigError, describe_exception
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import ProviderDiagnosis, ProviderPlugin, SupportsDiagnosis
from rigcli.state.damage import check_file, summary
from rigcli.state.factory import open_state
from rigcli.state.paths import plugin_index_file
from rigcli.state_location import StateLocationError


def installed_plugins(index: Path | None = None) -> Plugins:
    """The installed provider plugins (the ``rig.providers`` entry points)."""
    if index is None:
        index = plugin_index_file()
    return Plugins((), index)


def diagnose_defaults(plugins: Plugins) -> dict[str, ProviderDiagnosis]:
    """Each installed provider that can diagnose itself, with no config (the environment's defaults)."""
    found: dict[str, ProviderDiagnosis] = {}
    for provider_id in plugins.installed():
        diagnosis = _diagnose(_loaded(plugins, provider_id), dict)
        if diagnosis is not None:
            found[provider_id] = diagnosis
    return found


def _loaded(plugins: Plugins, wanted: ProviderDefinition | str) -> ProviderPlugin | None:
    """The plugin of a definition or id; None when it does not load (the commands using it say so)."""
    try:
        return plugins.by_id(wanted) if isinstance(wanted, str) else plugins.find(wanted)
    except RigError:
        return None


def _diagnose(plugin: ProviderPlugin | None, config: Callable[[], Mapping[str, object]]) -> ProviderDiagnosis | None:
    if not isinstance(plugin, SupportsDiagnosis):
        return None
    try:
        return plugin.diagnose(config())
    except Exception as exc:  # the hook must not raise; if it does, that is its diagnosis
        message = describe_exception(exc)
        return ProviderDiagnosis(summary=f"diagnosis failed: {message}", ok=False, details={"error": message})


class Diagnosis:
    """What ``rig doctor`` asks of a project's engine; works before ``load()`` and without it."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def diagnose(self) -> ProjectDiagnosis:
        project = self.project  # its .env was read when it was found (discovery.py)
        state = self._state()
        where, config = str(project.project_dir), str(project.config_path)
        try:
            providers = self._providers()
        except ConfigError as exc:  # a broken rig_config.py: doctor reports it (and fails on it)
            why = f"could not read the project's providers: {exc}"
            return ProjectDiagnosis(where, config, state, [], why, config_error=str(exc))
        except Exception as exc:  # a provider's failure: reported, not raised
            return ProjectDiagnosis(where, config, state, [], f"could not read the project's providers: {exc}")
        return ProjectDiagnosis(where, config, state, providers)

    def _state(self) -> dict[str, JsonValue]:
        """Backend, masked location, server and schema versions, lock holder; creates and waits for nothing."""

        project = self.project
        try:
            where = project.state_location()
        except StateLocationError as exc:
            return {"backend": exc.backend, "url": exc.shown, "error": str(exc)}
        try:
            store = open_state(where, project_dir=str(project.project_dir), read_only=True)
            try:
                status = store.status().to_json()
            finally:
                store.close()
        except RigError as exc:
            return {"backend": where.backend, "url": where.display, "error": str(exc)}
        if status["backend"] == "sqlite" and status["exists"]:
            try:  # doctor may take the few milliseconds a full read of the file costs
                found = check_file(str(status["url"]))
            except Exception as exc:  # doctor reports problems, it does not have them
                found = [f"{type(exc).__name__}: {exc}"]
            status["damaged"] = summary(found) if found else None
        return status

    def _providers(self) -> list[ConfiguredProvider]:
        """Each distinct provider definition the workflows use, diagnosed with its resolved config."""

        _, workflows = self.project.compile()
        plugins = Plugins(self.project.plugins, plugin_index_file())
        seen: dict[int, ConfiguredProvider | None] = {}
        for workflow in workflows.values():
            for scope in [workflow.root_providers, *workflow.all_scopes()]:
                for name, definition in scope.items():
                    if id(definition) in seen:
                        continue
                    diagnosis = _diagnose(_loaded(plugins, definition), definition.resolve_config)
                    seen[id(definition)] = (
                        None if diagnosis is None else ConfiguredProvider(name, definition.provider_id, diagnosis)
                    )
        return [item for item in seen.values() if item is not None]


__all__ = ["ConfiguredProvider", "Diagnosis", "ProjectDiagnosis", "diagnose_defaults", "installed_plugins"]
