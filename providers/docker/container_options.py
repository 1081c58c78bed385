"""What a caller may ask of a new container beyond its image: the create request's own fields.

``create_machine(image, options=...)`` and ``from_snapshot(ref, options=...)`` take a mapping of
these keys (snake_case, checked here) and the container is created with them; a key rig does not
know is refused, naming it. ``exec_user``/``exec_env`` are not the container's: they are what every
command run in the machine later gets (its tasks' execs, and ``rig exec``/``rig shell``, which read
them from the container's journaled effect), as ``docker exec -u``/``-e`` would give.

| key | what it sets |
|---|---|
| ``env`` | environment of the container (mapping) |
| ``user`` | the container's user (``docker run -u``) |
| ``labels`` | labels added (rig's own always win) |
| ``entrypoint``, ``cmd`` | the program the container runs instead of rig's idle one |
| ``workdir`` | its working directory, and where commands run by default |
| ``mounts`` | Engine API ``Mounts`` entries: ``{"Type", "Source", "Target", "ReadOnly"}`` |
| ``cap_add``, ``security_opt``, ``extra_hosts`` | lists, as ``--cap-add``, ``--security-opt``, ``--add-host`` |
| ``privileged``, ``init`` | booleans, as ``--privileged``, ``--init`` |
| ``network`` | the network mode (the provider's ``network`` otherwise) |
| ``memory``, ``nano_cpus`` | limits in bytes and billionths of a CPU, as ``--memory``, ``--cpus`` |
| ``exec_user``, ``exec_env`` | defaults of every command run in the machine |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rigcli.errors import ProviderError

KNOWN = frozenset(
    {
        "env", "user", "labels", "entrypoint", "cmd", "workdir", "mounts", "cap_add", "security_opt",
        "extra_hosts", "privileged", "init", "network", "memory", "nano_cpus", "exec_user", "exec_env",
    }
)  # fmt: skip
_HOST_FIELDS = {
    "mounts": "Mounts",
    "cap_add": "CapAdd",
    "security_opt": "SecurityOpt",
    "extra_hosts": "ExtraHosts",
    "privileged": "Privileged",
    "init": "Init",
    "network": "NetworkMode",
    "memory": "Memory",
    "nano_cpus": "NanoCpus",
}


def checked(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as a plain dict; a ProviderError naming the first key that is not one of ``KNOWN``."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ProviderError("docker container options must be a mapping")
    unknown = sorted(str(key) for key in options if key not in KNOWN)
    if unknown:
        raise ProviderError(f"docker container option {unknown[0]!r} is not one rig knows ({', '.join(sorted(KNOWN))})")
    for key in ("env", "labels", "exec_env"):
        if key in options and not isinstance(options[key], Mapping):
            raise ProviderError(f"docker container option {key} must be a mapping of strings")
    return dict(options)


def apply_options(body: dict[str, Any], options: Mapping[str, Any]) -> None:
    """Lay ``options`` over a ``/containers/create`` body (rig's labels already in it, and kept)."""
    if options.get("env"):
        body["Env"] = [f"{key}={value}" for key, value in options["env"].items()]
    if options.get("user"):
        body["User"] = str(options["user"])
    if options.get("labels"):
        body["Labels"] = {**{str(k): str(v) for k, v in options["labels"].items()}, **body["Labels"]}
    if "entrypoint" in options:
        body["Entrypoint"] = options["entrypoint"]
    if "cmd" in options:
        body["Cmd"] = options["cmd"]
    if options.get("workdir"):
        body["WorkingDir"] = str(options["workdir"])
    host = body.setdefault("HostConfig", {})
    for key, field in _HOST_FIELDS.items():
        if options.get(key) is not None:
            host[field] = options[key]


def asked(options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The options asked (checked) and the exec defaults among them; both empty for none."""
    wanted = checked(options)
    return wanted, exec_defaults(wanted) if wanted else {}


def exec_defaults(options: Mapping[str, Any]) -> dict[str, Any]:
    """What every command in the machine gets: its user and environment (empty when none is asked)."""
    found: dict[str, Any] = {}
    if options.get("exec_user"):
        found["user"] = str(options["exec_user"])
    if options.get("exec_env"):
        found["env"] = {str(key): str(value) for key, value in options["exec_env"].items()}
    return found


__all__ = ["KNOWN", "apply_options", "asked", "checked", "exec_defaults"]
