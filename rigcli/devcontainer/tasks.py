"""The workflow's tasks, each a plain function given its part of the configuration as plain JSON (``spec``,
which is what its cache key sees) and the docker provider's runtime (``box``).

Every task that changes the image starts a container from the image so far, does its part and
commits it (``snapshot``), then removes the container: the context carries the newest image (an
artifact, validated before a cached run is reused) and what the first image said of itself.
"""

from __future__ import annotations

import logging
import posixpath
import shlex
from typing import Any

from rigcli.devcontainer.files import context_files, project_files, tar_of, walk_files
from rigcli.devcontainer.lifecycle import run_in_machine, run_on_host
from rigcli.devcontainer.variables import container_env_resolver
from rigcli.jsonutil import JsonValue

FEATURES_DIR = "/tmp/dev-container-features"  # where the reference puts each feature's files to install
# The reference's lookup of a user's passwd entry (getent where the image has it).
_PASSWD = (
    "(command -v getent >/dev/null 2>&1 && getent passwd {u} || grep -E '^{u}:|^[^:]*:[^:]*:{u}:' /etc/passwd || true)"
)
Ctx = dict[str, Any]


def initialize_task(spec: dict[str, Any]) -> None:
    """``initializeCommand``, on this host, in the project's directory; nothing when absent."""
    if spec["command"] is not None:
        run_on_host("initializeCommand", spec["command"], cwd=spec["folder"])


def image_task(spec: dict[str, Any], step: Any, box: Any, log: logging.Logger) -> dict[str, JsonValue]:
    """The image everything starts from: ``image`` (pulled only when the daemon lacks it) or a build."""
    if spec.get("image"):
        info = box.ensure_image(spec["image"], say=print)
        ref = {"provider": "docker", "kind": "image", "image_id": info["Id"]}
    else:
        build = spec["build"]
        context = tar_of(build["context_dir"], context_files(build["context_dir"]))
        ref = box.build_image(
            context, dockerfile=build["dockerfile"], args=build["args"], target=build["target"], say=print
        )
        info = box.image_info(ref)
    from rigcli.devcontainer.host_requirements import warn_host_requirements

    warn_host_requirements(spec.get("host_requirements"), box, log)
    config = (info or {}).get("Config") or {}
    base = {
        "user": config.get("User") or "root",
        "entrypoint": config.get("Entrypoint"),
        "cmd": config.get("Cmd"),
        # The image's environment as the tasks after this one leave it (features add theirs): what
        # ${containerEnv:X} reads, known without asking the daemon at fork.
        "env": dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item),
    }
    return {"ctx": {**dict(step.ctx), "image": ref, "base": base}}


def feature_task(spec: dict[str, Any], step: Any, box: Any) -> dict[str, JsonValue]:
    """Install one feature as root, as the reference's generated Dockerfile does, and commit it."""
    ctx: Ctx = dict(step.ctx)
    feature = spec["feature"]
    folder = posixpath.join(FEATURES_DIR, feature["consecutive_id"])
    container_user = spec["container_user"] or ctx["base"]["user"]
    remote_user = spec["remote_user"] or container_user
    machine = box.from_snapshot(ctx["image"], options={"network": spec["network"]}).with_user("root")
    try:
        extra = {
            f"{feature['consecutive_id']}/devcontainer-features.env": "\n".join(feature["options_env"]) + "\n",
            "devcontainer-features.builtin.env": f"_CONTAINER_USER={container_user}\n_REMOTE_USER={remote_user}\n",
        }
        archive = tar_of(
            feature["folder"], walk_files(feature["folder"]), prefix=f"{feature['consecutive_id']}/", extra=extra
        )
        machine.put_archive(FEATURES_DIR, archive)
        builtin = f"{FEATURES_DIR}/devcontainer-features.builtin.env"
        homes = " && ".join(
            f'echo "_{who}_HOME=$( {_PASSWD.format(u=shlex.quote(user))} | cut -d: -f6)" >> {builtin}'
            for who, user in (("CONTAINER_USER", container_user), ("REMOTE_USER", remote_user))
        )
        machine.exec(homes, name="feature users")
        script = (
            "set -e; chmod -R 0755 .; set -a; . ../devcontainer-features.builtin.env; . ./devcontainer-features.env; "
            "set +a; chmod +x ./install.sh; ./install.sh"
        )
        machine.exec(script, name=f"install {feature['id']}", cwd=folder, env=feature["container_env"])
        changes = [f'ENV {key}="{_env_text(value)}"' for key, value in feature["container_env"].items()]
        ref = machine.snapshot_with(changes)
    finally:
        machine.delete()
    base = {**ctx["base"], "env": {**ctx["base"]["env"], **feature["container_env"]}}
    return {"ctx": {**ctx, "image": ref, "base": base}}


def source_task(spec: dict[str, Any], step: Any, box: Any) -> dict[str, JsonValue]:
    """The project's files copied into the workspace folder, owned by the user who works there."""
    ctx: Ctx = dict(step.ctx)
    folder = spec["folder"]
    user = spec["remote_user"] or spec["container_user"] or ctx["base"]["user"]
    machine = box.from_snapshot(ctx["image"], options={"network": spec["network"]}).with_user("root")
    try:
        root = spec["project_dir"]
        machine.put_archive(folder, tar_of(root, project_files(root)))
        if user not in ("root", "0"):
            owner = shlex.quote(user)
            # A user the image does not have yet (an onCreateCommand may add it) leaves the files root's.
            chown = f"chown -R $(id -u {owner}):$(id -g {owner}) {shlex.quote(folder)}"
            machine.exec(f"if id -u {owner} >/dev/null 2>&1; then {chown}; fi", name="owner")
        ref = machine.snapshot_ref()
    finally:
        machine.delete()
    return {"ctx": {**ctx, "image": ref}}


def hook_task(spec: dict[str, Any], step: Any, box: Any) -> dict[str, JsonValue] | None:
    """``onCreateCommand`` or ``updateContentCommand`` (features' first) in the container, committed;
    nothing at all when neither the configuration nor a feature has one."""
    forms = [form for form in spec["forms"] if form]
    if not forms:
        return None
    ctx: Ctx = dict(step.ctx)
    machine = box.from_snapshot(ctx["image"], options=spec["options"])
    try:
        env, user = remote_environment(spec, ctx)
        resolve = container_env_resolver(container_env(spec, ctx), spec["config_file"])
        worker = machine.with_user(user)
        for form in forms:
            run_in_machine(worker, spec["key"], resolve(form), env=env, cwd=spec["folder"])
        ref = machine.snapshot_ref()
    finally:
        machine.delete()
    return {"ctx": {**ctx, "image": ref}}


def remote_environment(spec: dict[str, Any], ctx: Ctx) -> tuple[dict[str, str], str]:
    """``remoteEnv`` with ``${containerEnv:X}`` read from the container's configured environment
    (its image's and ``containerEnv``), and the user commands run as."""
    resolve = container_env_resolver(container_env(spec, ctx), spec["config_file"])
    resolved = resolve(spec["remote_env"])
    assert isinstance(resolved, dict)
    env = {str(key): str(value) for key, value in resolved.items() if value is not None}
    user = spec["remote_user"] or spec["container_user"] or ctx["base"]["user"]
    return env, str(user)


def container_env(spec: dict[str, Any], ctx: Ctx) -> dict[str, str]:
    """The container's configured environment: its image's, then ``containerEnv``."""
    return {**ctx["base"]["env"], **(spec["options"].get("env") or {})}


def _env_text(value: str) -> str:
    """A value inside ``ENV K="..."``: quotes and backslashes escaped, as the reference writes them."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


__all__ = [
    "container_env",
    "feature_task",
    "hook_task",
    "image_task",
    "initialize_task",
    "remote_environment",
    "source_task",
]
