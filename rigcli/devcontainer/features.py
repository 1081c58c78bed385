"""Features named in devcontainer.json, resolved when the config loads: a local ``./folder`` beside the
configuration, or an OCI reference fetched from its registry (``oci.py``); each with its
``devcontainer-feature.json``, its options as the environment its ``install.sh`` reads (per the
spec: the option's name in capitals, ``_`` for anything else, the user's value else the default),
what it adds to the container, and a digest of its content for the cache key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rigcli.devcontainer.feature_order import Feature, install_order
from rigcli.devcontainer.files import tree_digest, walk_files
from rigcli.devcontainer.jsonc import read_jsonc
from rigcli.devcontainer.oci import FeatureRef, fetched_feature
from rigcli.errors import ConfigError

METADATA = "devcontainer-feature.json"
_HOOKS = ("onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand", "postAttachCommand")


def safe_id(name: str) -> str:
    """The reference's ``getSafeId``: an option name as an environment variable's."""
    return re.sub(r"^[\d_]+", "_", re.sub(r"[^\w_]", "_", name)).upper()


def resolve_features(
    wanted: Mapping[str, object],
    override: list[str],
    *,
    config_dir: str,
    where: str,
    cache_root: Callable[[], str],
) -> list[Feature]:
    """Every feature to install (those ``dependsOn`` brings in too), in install order."""
    found: list[Feature] = []
    queue: list[tuple[str, object]] = list(wanted.items())
    while queue:
        key, value = queue.pop(0)
        if any(item["key"] == key for item in found):
            continue
        item = _resolve(key, value, config_dir=config_dir, where=where, cache_root=cache_root)
        found.append(item)
        queue.extend((dep, options) for dep, options in item["depends_on_options"].items())
    for item in found:
        item.pop("depends_on_options")
    ordered = install_order(found, override, where)
    for index, item in enumerate(ordered):
        item["consecutive_id"] = f"{item['id']}_{index}"
    return ordered


def _resolve(key: str, value: object, *, config_dir: str, where: str, cache_root: Callable[[], str]) -> Feature:
    if key.startswith(("./", "../")):
        folder = os.path.realpath(os.path.join(config_dir, key))
        if not os.path.isfile(os.path.join(folder, METADATA)):
            raise ConfigError(f'{where}: feature "{key}" has no {METADATA} in {folder}')
        item: Feature = {
            "key": key,
            "kind": "local",
            "folder": folder,
            "digest": tree_digest(folder, walk_files(folder)),
        }
    else:
        ref = FeatureRef(key)
        folder, digest = fetched_feature(ref, cache_root())
        item = {"key": key, "kind": "oci", "folder": folder, "digest": digest, "resource": ref.resource}
        item["tag"] = None if ref.reference.startswith("sha256:") else ref.reference
    metadata = read_jsonc_object(os.path.join(item["folder"], METADATA))
    item["id"] = str(metadata.get("id") or os.path.basename(item["folder"]))
    if not re.fullmatch(r"[A-Za-z0-9_-]+", item["id"]):
        raise ConfigError(f'{where}: feature "{key}" has the id "{item["id"]}", which is not [A-Za-z0-9_-]+')
    if not os.path.isfile(os.path.join(item["folder"], "install.sh")):
        raise ConfigError(f'{where}: feature "{key}" has no install.sh')
    item["version"] = str(metadata.get("version") or "")
    item["options_env"] = options_env(metadata, value, key, where)
    item["container_env"] = {str(k): str(v) for k, v in _mapping(metadata, "containerEnv").items()}
    item["installs_after"] = [str(dep) for dep in metadata.get("installsAfter") or []]
    depends = _mapping(metadata, "dependsOn")
    item["depends_on"] = list(depends)
    item["depends_on_options"] = dict(depends)
    item["hooks"] = {hook: metadata[hook] for hook in _HOOKS if metadata.get(hook)}
    item["run"] = {
        "mounts": list(metadata.get("mounts") or []),
        "cap_add": [str(cap) for cap in metadata.get("capAdd") or []],
        "security_opt": [str(opt) for opt in metadata.get("securityOpt") or []],
        "privileged": bool(metadata.get("privileged")),
        "init": bool(metadata.get("init")),
        "entrypoint": metadata.get("entrypoint") or None,
    }
    return item


def options_env(metadata: Mapping[str, Any], value: object, key: str, where: str) -> list[str]:
    """``NAME="value"`` lines for ``devcontainer-features.env``: defaults, then what the user gave."""
    options = _mapping(metadata, "options")
    values: dict[str, object] = {
        name: spec["default"] for name, spec in options.items() if isinstance(spec, dict) and "default" in spec
    }
    if isinstance(value, dict):
        values.update(value)
    elif isinstance(value, str) and "version" in options:
        values["version"] = value
    elif value is not True and value is not False and not isinstance(value, str):
        raise ConfigError(f'{where}: feature "{key}": its value must be true, a version string or an object of options')
    return [f'{safe_id(name)}="{_text(item)}"' for name, item in values.items()]


def _text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _mapping(metadata: Mapping[str, Any], key: str) -> dict[str, Any]:
    found = metadata.get(key) or {}
    return dict(found) if isinstance(found, dict) else {}


def read_jsonc_object(path: str) -> dict[str, Any]:
    document = read_jsonc(Path(path))
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: must be a JSON object")
    return document


__all__ = ["METADATA", "options_env", "resolve_features", "safe_id"]
