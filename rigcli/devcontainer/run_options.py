"""How the container runs: devcontainer.json's run keys (and ``runArgs``, a subset of ``docker run``'s
options; any other is refused, naming it) turned into the docker provider's container options.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from rigcli.devcontainer.model import DevContainerKeys
from rigcli.errors import ConfigError

# docker run option -> (container option, takes a value)
_RUN_ARGS: dict[str, tuple[str, bool]] = {
    "--cap-add": ("cap_add", True),
    "--security-opt": ("security_opt", True),
    "-e": ("env", True),
    "--env": ("env", True),
    "--label": ("labels", True),
    "-l": ("labels", True),
    "--init": ("init", False),
    "--privileged": ("privileged", False),
    "--add-host": ("extra_hosts", True),
    "--network": ("network", True),
    "--net": ("network", True),
    "--memory": ("memory", True),
    "-m": ("memory", True),
    "--cpus": ("nano_cpus", True),
}
SUPPORTED_RUN_ARGS = (
    "--cap-add --security-opt -e/--env --label --init --privileged --add-host --network --memory --cpus"
)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_run_args(args: list[str], where: str) -> dict[str, Any]:
    """``runArgs`` as container options; a ConfigError naming the first option rig does not take."""
    options: dict[str, Any] = {}
    for flag, value in _pairs(args, where):
        key, _ = _RUN_ARGS[flag]
        if key in ("cap_add", "security_opt", "extra_hosts"):
            options.setdefault(key, []).append(value)
        elif key in ("env", "labels"):
            name, _, text = str(value).partition("=")
            options.setdefault(key, {})[name] = text
        elif key in ("init", "privileged"):
            options[key] = True
        elif key == "memory":
            options[key] = memory_bytes(str(value), f"{where}: runArgs {flag}")
        elif key == "nano_cpus":
            try:
                options[key] = int(float(str(value)) * 1e9)
            except ValueError:
                raise ConfigError(f"{where}: runArgs --cpus takes a number, not {value!r}") from None
        else:
            options[key] = value
    return options


def _pairs(args: list[str], where: str) -> Iterator[tuple[str, str | None]]:
    index = 0
    while index < len(args):
        word = str(args[index])
        flag, joined, value = word.partition("=")
        if flag not in _RUN_ARGS:
            raise ConfigError(f"{where}: runArgs option {flag!r} is not supported (rig takes {SUPPORTED_RUN_ARGS})")
        takes_value = _RUN_ARGS[flag][1]
        if takes_value and not joined:
            if index + 1 >= len(args):
                raise ConfigError(f"{where}: runArgs option {flag} needs a value")
            index += 1
            value = str(args[index])
        yield flag, value if takes_value else None
        index += 1


def memory_bytes(text: str, what: str) -> int:
    """``512m``, ``2g``, ``4gb`` (binary units, as docker reads them) in bytes."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)b?\s*", text.lower())
    if found is None:
        raise ConfigError(f"{what}: {text!r} is not a size such as 512m or 4gb")
    return int(float(found[1]) * _UNITS[found[2]])


def parse_mount(mount: str | dict[str, Any], where: str) -> dict[str, Any]:
    """A ``--mount`` string (``type=bind,source=/a,target=/b,readonly``) or object as an Engine API mount."""
    if isinstance(mount, dict):
        source = mount.get("source")
        return _api_mount(
            str(mount.get("type") or "bind"), str(source) if source else None, mount.get("target"), False, where
        )
    fields: dict[str, str] = {}
    for part in str(mount).split(","):
        name, _, value = part.strip().partition("=")
        fields[name.strip().lower()] = value.strip()
    source = fields.get("source", fields.get("src"))
    target = fields.get("target", fields.get("destination", fields.get("dst")))
    readonly = any(name in fields and fields[name] in ("", "1", "true") for name in ("readonly", "ro"))
    return _api_mount(fields.get("type", "volume"), source, target, readonly, where)


def _api_mount(kind: str, source: str | None, target: str | None, readonly: bool, where: str) -> dict[str, Any]:
    if kind not in ("bind", "volume", "tmpfs"):
        raise ConfigError(f"{where}: mount type {kind!r} is not supported (bind, volume, tmpfs)")
    if not target:
        raise ConfigError(f"{where}: a mount needs a target")
    if kind == "bind" and not source:
        raise ConfigError(f"{where}: a bind mount needs a source")
    found: dict[str, Any] = {"Type": kind, "Target": target, "ReadOnly": readonly}
    if source:
        found["Source"] = source
    return found


def container_options(
    keys: DevContainerKeys, features: list[dict[str, Any]], local_folder: str, where: str
) -> dict[str, Any]:
    """What every container of this configuration is made with (hook tasks' and workspaces')."""
    options = parse_run_args(keys.run_args, where)
    run_env = options.pop("env", {})
    options["env"] = {**run_env, **keys.container_env}
    if keys.container_user:
        options["user"] = keys.container_user
    mounts = [parse_mount(item, where) for feature in features for item in feature["run"]["mounts"]]
    mounts += [parse_mount(item, where) for item in keys.mounts]
    workspace = _workspace_mount(keys.workspace_mount, local_folder, where)
    if workspace is not None:
        mounts.append(workspace)
    if mounts:
        options["mounts"] = mounts
    caps = [*options.get("cap_add", []), *keys.cap_add, *(c for f in features for c in f["run"]["cap_add"])]
    secs = [
        *options.get("security_opt", []),
        *keys.security_opt,
        *(s for f in features for s in f["run"]["security_opt"]),
    ]
    if caps:
        options["cap_add"] = sorted(set(caps))
    if secs:
        options["security_opt"] = sorted(set(secs))
    if keys.privileged or any(f["run"]["privileged"] for f in features):
        options["privileged"] = True
    # As the reference runs it: no init process unless asked (rig's own containers have one).
    options["init"] = bool(keys.init or options.get("init") or any(f["run"]["init"] for f in features))
    options.setdefault("network", "default")
    return options


def _workspace_mount(text: str | None, local_folder: str, where: str) -> dict[str, Any] | None:
    """The ``workspaceMount``, unless it is the project folder's bind (rig copies the project instead)."""
    if not text:
        return None
    mount = parse_mount(text, where)
    if mount["Type"] == "bind" and str(mount.get("Source", "")).rstrip("/") == local_folder.rstrip("/"):
        return None
    return mount


__all__ = ["SUPPORTED_RUN_ARGS", "container_options", "memory_bytes", "parse_mount", "parse_run_args"]
