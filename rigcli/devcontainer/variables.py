"""``${...}`` in devcontainer.json: what is known on this host at load, and ``${containerEnv:X}`` in the container.

As the reference implementation does: an unknown variable is left as written, ``${localEnv:X}``
of an unset X is empty unless a default follows (``${localEnv:X:default}``), and ``${env:X}`` is the
old name of ``${localEnv:X}``.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping

from rigcli.errors import ConfigError
from rigcli.jsonutil import JsonValue
from rigcli.speed.digests import sha256

_VARIABLE = re.compile(r"\$\{(.*?)\}")
_BASE32 = "0123456789abcdefghijklmnopqrstuv"


def devcontainer_id(local_folder: str, config_file: str) -> str:
    """The reference's ``${devcontainerId}``: its two id labels, hashed, in base 32 (52 digits)."""
    labels = {"devcontainer.config_file": config_file, "devcontainer.local_folder": local_folder}
    text = json.dumps(labels, separators=(",", ":"), ensure_ascii=False)
    number = int(sha256(text.encode("utf-8")).hexdigest(), 16)
    digits = ""
    while number:
        number, digit = divmod(number, 32)
        digits = _BASE32[digit] + digits
    return digits.rjust(52, "0")


def default_workspace_folder(local_folder: str) -> str:
    return f"/workspaces/{posixpath.basename(local_folder.rstrip('/'))}"


class LocalVariables:
    """What ``${...}`` means before a container exists: this host's environment and folders."""

    def __init__(self, environ: Mapping[str, str], local_folder: str, config_file: str) -> None:
        self.environ = environ
        self.local_folder = local_folder
        self.config_file = config_file
        self.container_folder: str | None = None

    def resolve(self, value: JsonValue) -> JsonValue:
        return _walk(value, self._replace)

    def _replace(self, match: str, name: str, args: list[str]) -> str:
        if name in ("localEnv", "env"):
            return lookup(self.environ, args, match, self.config_file)
        if name == "localWorkspaceFolder":
            return self.local_folder
        if name == "localWorkspaceFolderBasename":
            return posixpath.basename(self.local_folder.rstrip("/"))
        if name == "containerWorkspaceFolder" and self.container_folder is not None:
            return self.container_folder
        if name == "containerWorkspaceFolderBasename" and self.container_folder is not None:
            return posixpath.basename(self.container_folder.rstrip("/"))
        if name == "devcontainerId":
            return devcontainer_id(self.local_folder, self.config_file)
        return match


def resolve_document(document: dict[str, JsonValue], variables: LocalVariables) -> dict[str, JsonValue]:
    """The document with its local variables replaced; ``workspaceFolder`` first, as the others may name it."""
    folder = document.get("workspaceFolder")
    if isinstance(folder, str):
        variables.container_folder = str(variables.resolve(folder))
    else:
        variables.container_folder = default_workspace_folder(variables.local_folder)
    resolved = variables.resolve(document)
    assert isinstance(resolved, dict)
    return resolved


def container_env_resolver(container_env: Mapping[str, str], config_file: str) -> Callable[[JsonValue], JsonValue]:
    """``${containerEnv:X}`` (and its default) read from the container's configured environment."""

    def replace(match: str, name: str, args: list[str]) -> str:
        return lookup(container_env, args, match, config_file) if name == "containerEnv" else match

    return lambda value: _walk(value, replace)


def lookup(environ: Mapping[str, str], args: list[str], match: str, config_file: str) -> str:
    if not args:
        raise ConfigError(f"{config_file}: '{match}' cannot be resolved: it names no environment variable")
    found = environ.get(args[0])
    if found is not None:
        return found
    return args[1] if len(args) > 1 else ""


def _walk(value: JsonValue, replace: Callable[[str, str, list[str]], str]) -> JsonValue:
    if isinstance(value, str):
        return _VARIABLE.sub(lambda found: _one(found, replace), value)
    if isinstance(value, list):
        return [_walk(item, replace) for item in value]
    if isinstance(value, dict):
        return {key: _walk(item, replace) for key, item in value.items()}
    return value


def _one(found: re.Match[str], replace: Callable[[str, str, list[str]], str]) -> str:
    name, *args = found.group(1).split(":")
    return replace(found.group(0), name, args)


__all__ = [
    "LocalVariables",
    "container_env_resolver",
    "default_workspace_folder",
    "devcontainer_id",
    "lookup",
    "resolve_document",
]
