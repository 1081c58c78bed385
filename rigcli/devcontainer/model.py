"""The keys of devcontainer.json rig reads, each checked for its type as the configuration loads, and
the refusals made then.

A small checker of its own rather than a pydantic model: building a model of these ~40 keys (and
importing pydantic) cost ~0.3 s of every command in a dev container project, more than the rest of a
fork. Each key's type is one entry below; a value of the wrong type is refused naming the key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rigcli.errors import ConfigError

COMPOSE_REFUSAL = "Docker Compose dev containers are not supported yet"
HOOK_KEYS = (
    "initializeCommand",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
)
Check = Callable[[object, str], Any]


class Invalid(Exception):
    """A value of the wrong type: the message says what it should be."""


def _text(value: object, key: str) -> str:
    if isinstance(value, str):
        return value
    raise Invalid("should be a string")


def _optional(check: Check) -> Check:
    return lambda value, key: None if value is None else check(value, key)


def _flag(value: object, key: str) -> bool:
    if isinstance(value, bool):
        return value
    raise Invalid("should be true or false")


def _words(value: object, key: str) -> list[str]:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise Invalid("should be an array of strings")


def _environment(value: object, key: str) -> dict[str, str]:
    """The reference writes numbers and booleans as their text: ``"PORT": 3000`` is PORT=3000."""
    if not isinstance(value, dict):
        raise Invalid("should be an object")
    found: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, bool):
            found[name] = "true" if item else "false"
        elif isinstance(item, (int, float, str)):
            found[name] = str(item)
        else:
            raise Invalid(f"{name} should be a string")
    return found


def _remote_environment(value: object, key: str) -> dict[str, str | None]:
    if not isinstance(value, dict):
        raise Invalid("should be an object")
    nulls = {name for name, item in value.items() if item is None}
    found: dict[str, str | None] = dict(_environment({k: v for k, v in value.items() if k not in nulls}, key))
    found.update(dict.fromkeys(nulls))
    return found


def _command(value: object, key: str) -> object:
    if isinstance(value, str) or (isinstance(value, list) and all(isinstance(item, str) for item in value)):
        return value
    if isinstance(value, dict):
        for name, item in value.items():
            if not (isinstance(item, str) or (isinstance(item, list) and all(isinstance(w, str) for w in item))):
                raise Invalid(f"{name} should be a string or an array of strings")
        return value
    raise Invalid("should be a string, an array of strings or an object of them")


def _object(value: object, key: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise Invalid("should be an object")


def _features(value: object, key: str) -> dict[str, Any]:
    found = _object(value, key)
    for name, item in found.items():
        if not isinstance(item, (bool, str, dict)):
            raise Invalid(f"{name} should be true, a version string or an object of options")
    return found


def _mounts(value: object, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise Invalid("should be an array")
    for item in value:
        if isinstance(item, dict):
            if not isinstance(item.get("target"), str):
                raise Invalid("each mount object needs a target")
        elif not isinstance(item, str):
            raise Invalid("each mount should be a string or an object")
    return list(value)


def _ports(value: object, key: str) -> list[int | str]:
    if isinstance(value, list) and all(isinstance(item, (int, str)) and not isinstance(item, bool) for item in value):
        return list(value)
    raise Invalid("should be an array of port numbers (or host:port strings)")


def _build(value: object, key: str) -> dict[str, Any]:
    found = dict(_object(value, key))
    for name in ("dockerfile", "context", "target"):
        if found.get(name) is not None and not isinstance(found[name], str):
            raise Invalid(f"{name} should be a string")
    found["args"] = _environment(found.get("args") or {}, key)
    return found


def _host_requirements(value: object, key: str) -> dict[str, Any]:
    found = _object(value, key)
    if found.get("cpus") is not None and (not isinstance(found["cpus"], int) or isinstance(found["cpus"], bool)):
        raise Invalid("cpus should be a number")
    for name in ("memory", "storage"):
        if found.get(name) is not None and not isinstance(found[name], str):
            raise Invalid(f"{name} should be a size such as 4gb")
    return {name: item for name, item in found.items() if item is not None}


def _attribute(key: str) -> str:
    """``postCreateCommand`` -> ``post_create_command``."""
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in key)


# key -> (attribute, check, default)
_KEYS: dict[str, tuple[str, Check, Any]] = {
    "name": ("name", _optional(_text), None),
    "image": ("image", _optional(_text), None),
    "build": ("build", _optional(_build), None),
    "dockerFile": ("docker_file", _optional(_text), None),
    "context": ("context", _optional(_text), None),
    "features": ("features", _features, {}),
    "overrideFeatureInstallOrder": ("override_feature_install_order", _words, []),
    "containerEnv": ("container_env", _environment, {}),
    "remoteEnv": ("remote_env", _remote_environment, {}),
    "containerUser": ("container_user", _optional(_text), None),
    "remoteUser": ("remote_user", _optional(_text), None),
    "workspaceFolder": ("workspace_folder", _optional(_text), None),
    "workspaceMount": ("workspace_mount", _optional(_text), None),
    "mounts": ("mounts", _mounts, []),
    "capAdd": ("cap_add", _words, []),
    "securityOpt": ("security_opt", _words, []),
    "privileged": ("privileged", _flag, False),
    "init": ("init", _optional(_flag), None),
    "overrideCommand": ("override_command", _flag, True),
    "runArgs": ("run_args", _words, []),
    "forwardPorts": ("forward_ports", _ports, []),
    "portsAttributes": ("ports_attributes", _object, {}),
    "hostRequirements": ("host_requirements", _optional(_host_requirements), None),
    "customizations": ("customizations", _object, {}),  # kept, for the editors that read it
    "shutdownAction": ("shutdown_action", _optional(_text), None),  # read, and ignored
    **{key: (_attribute(key), _optional(_command), None) for key in HOOK_KEYS},
}


class DevContainerKeys:
    """What rig reads of one configuration (after ``${...}`` variables outside the container are replaced)."""

    name: str | None
    image: str | None
    build: dict[str, Any] | None
    docker_file: str | None
    context: str | None
    features: dict[str, Any]
    override_feature_install_order: list[str]
    container_env: dict[str, str]
    remote_env: dict[str, str | None]
    container_user: str | None
    remote_user: str | None
    workspace_folder: str | None
    workspace_mount: str | None
    mounts: list[Any]
    cap_add: list[str]
    security_opt: list[str]
    privileged: bool
    init: bool | None
    override_command: bool
    run_args: list[str]
    forward_ports: list[int | str]
    ports_attributes: dict[str, Any]
    host_requirements: dict[str, Any] | None
    customizations: dict[str, Any]
    shutdown_action: str | None
    initialize_command: Any
    on_create_command: Any
    update_content_command: Any
    post_create_command: Any
    post_start_command: Any
    post_attach_command: Any

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    @property
    def dockerfile(self) -> str | None:
        return self.build.get("dockerfile") if self.build and self.build.get("dockerfile") else self.docker_file

    @property
    def build_context(self) -> str:
        return (self.build.get("context") if self.build and self.build.get("context") else self.context) or "."

    def hook(self, key: str) -> Any:
        """A lifecycle command by its key (``postCreateCommand``)."""
        return getattr(self, _KEYS[key][0])


def read_keys(document: object, where: str) -> DevContainerKeys:
    """The keys of ``document``; a ConfigError naming ``where`` and the key for anything rig refuses."""
    if not isinstance(document, dict):
        raise ConfigError(f"{where}: a dev container configuration is a JSON object, not {type(document).__name__}")
    if "dockerComposeFile" in document:
        raise ConfigError(f"{where}: {COMPOSE_REFUSAL} (dockerComposeFile)")
    values: dict[str, Any] = {}
    for key, (attribute, check, default) in _KEYS.items():
        if key not in document:
            values[attribute] = default.copy() if isinstance(default, (dict, list)) else default
            continue
        try:
            values[attribute] = check(document[key], key)
        except Invalid as exc:
            raise ConfigError(f"{where}: {key}: {exc}") from None
    keys = DevContainerKeys(values)
    if keys.image and keys.dockerfile:
        raise ConfigError(f"{where}: image and build.dockerfile are both set; keep one")
    if not keys.image and not keys.dockerfile:
        raise ConfigError(
            f"{where}: neither image nor build.dockerfile is set (nor dockerComposeFile, which rig refuses)"
        )
    return keys


__all__ = ["COMPOSE_REFUSAL", "HOOK_KEYS", "DevContainerKeys", "read_keys"]
