"""One dev container configuration, loaded: read (JSONC), its local variables replaced, checked, its
features resolved and its container options worked out; every refusal raised here, at load."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rigcli.devcontainer.feature_order import Feature
from rigcli.devcontainer.features import resolve_features
from rigcli.devcontainer.jsonc import read_jsonc
from rigcli.devcontainer.locations import named_workflow
from rigcli.devcontainer.model import DevContainerKeys, read_keys
from rigcli.devcontainer.run_options import container_options, memory_bytes
from rigcli.devcontainer.variables import LocalVariables, resolve_document
from rigcli.errors import ConfigError
from rigcli.speed.records import lazy_dataclass
from rigcli.state.paths import rig_home_path

DEFAULT_WORKFLOW = "devcontainer"


@lazy_dataclass(frozen=True)
class DevContainer:
    """A loaded configuration: where it is, its keys, its features in install order, how its containers run."""

    config_file: str
    project_dir: str
    workflow: str
    keys: DevContainerKeys
    features: tuple[Feature, ...]
    options: Mapping[str, Any]
    workspace_folder: str

    @property
    def config_dir(self) -> str:
        return os.path.dirname(self.config_file)


def workflow_name(name: str | None) -> str:
    """``name`` made a valid workflow name (letters, digits, ``.``, ``_``, ``-``), else ``devcontainer``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name or "").strip("-._")[:63]
    return cleaned or DEFAULT_WORKFLOW


def load_devcontainer(relative: str, project_dir: str, environ: Mapping[str, str] | None = None) -> DevContainer:
    """The configuration at ``relative`` (to ``project_dir``), loaded; a ConfigError for anything refused."""
    config_file = os.path.normpath(os.path.join(project_dir, relative))
    if not os.path.isfile(config_file):
        raise ConfigError(f"{config_file}: no such dev container configuration")
    document = read_jsonc(Path(config_file))
    if not isinstance(document, dict):
        raise ConfigError(f"{config_file}: a dev container configuration is a JSON object")
    variables = LocalVariables(os.environ if environ is None else environ, project_dir, config_file)
    resolved = resolve_document(document, variables)
    keys = read_keys(resolved, config_file)
    _check_host_requirements(keys, config_file)
    features = resolve_features(
        keys.features,
        keys.override_feature_install_order,
        config_dir=os.path.dirname(config_file),
        where=config_file,
        cache_root=_feature_cache,
    )
    assert variables.container_folder is not None
    return DevContainer(
        config_file=config_file,
        project_dir=project_dir,
        workflow=named_workflow(relative) or workflow_name(keys.name),
        keys=keys,
        features=tuple(features),
        options=container_options(keys, features, project_dir, config_file),
        workspace_folder=variables.container_folder,
    )


def _check_host_requirements(keys: DevContainerKeys, where: str) -> None:
    wanted = keys.host_requirements or {}
    for size in (wanted.get("memory"), wanted.get("storage")):
        if size is not None:
            memory_bytes(size, f"{where}: hostRequirements")


def _feature_cache() -> str:
    return os.path.join(rig_home_path(), "cache", "devcontainer-features")


__all__ = ["DEFAULT_WORKFLOW", "DevContainer", "load_devcontainer", "workflow_name"]
