"""The keys of devcontainer.json rig reads, as a pydantic model, and the refusals made when it loads."""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rigcli.errors import ConfigError

CommandForm = Union[str, list[str], dict[str, Union[str, list[str]]]]  # noqa: UP007 - pydantic on 3.10
FeatureValue = Union[bool, str, dict[str, Union[str, bool, int, float]]]  # noqa: UP007

COMPOSE_REFUSAL = "Docker Compose dev containers are not supported yet"
HOOK_KEYS = (
    "initializeCommand",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
)


class _Keys(BaseModel):
    # Keys rig does not know are kept by the reference tools for others (editors, services): ignored here too.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class BuildKeys(_Keys):
    dockerfile: str | None = None
    context: str | None = None
    args: dict[str, str] = Field(default_factory=dict)
    target: str | None = None
    cache_from: str | list[str] | None = Field(default=None, alias="cacheFrom")
    options: list[str] = Field(default_factory=list)


class MountKeys(_Keys):
    type: Literal["bind", "volume", "tmpfs"] = "bind"
    source: str | None = None
    target: str


class PortAttributes(_Keys):
    label: str = ""
    protocol: Literal["http", "https", "tcp", "udp"] | None = None
    on_auto_forward: str | None = Field(default=None, alias="onAutoForward")


class HostRequirements(_Keys):
    cpus: int | None = None
    memory: str | None = None
    storage: str | None = None
    gpu: bool | str | dict[str, Any] | None = None


class DevContainerKeys(_Keys):
    """What rig reads of one configuration (after ``${...}`` variables outside the container are replaced)."""

    name: str | None = None
    image: str | None = None
    build: BuildKeys | None = None
    docker_file: str | None = Field(default=None, alias="dockerFile")  # the old spelling of build.dockerfile
    context: str | None = None  # the old spelling of build.context
    features: dict[str, FeatureValue] = Field(default_factory=dict)
    override_feature_install_order: list[str] = Field(default_factory=list, alias="overrideFeatureInstallOrder")
    container_env: dict[str, str] = Field(default_factory=dict, alias="containerEnv")
    remote_env: dict[str, str | None] = Field(default_factory=dict, alias="remoteEnv")
    container_user: str | None = Field(default=None, alias="containerUser")
    remote_user: str | None = Field(default=None, alias="remoteUser")
    workspace_folder: str | None = Field(default=None, alias="workspaceFolder")
    workspace_mount: str | None = Field(default=None, alias="workspaceMount")
    mounts: list[str | MountKeys] = Field(default_factory=list)
    cap_add: list[str] = Field(default_factory=list, alias="capAdd")
    security_opt: list[str] = Field(default_factory=list, alias="securityOpt")
    privileged: bool = False
    init: bool | None = None
    override_command: bool = Field(default=True, alias="overrideCommand")
    run_args: list[str] = Field(default_factory=list, alias="runArgs")
    forward_ports: list[int | str] = Field(default_factory=list, alias="forwardPorts")
    ports_attributes: dict[str, PortAttributes] = Field(default_factory=dict, alias="portsAttributes")
    host_requirements: HostRequirements | None = Field(default=None, alias="hostRequirements")
    customizations: dict[str, Any] = Field(default_factory=dict)
    shutdown_action: str | None = Field(default=None, alias="shutdownAction")  # read, and ignored
    initialize_command: CommandForm | None = Field(default=None, alias="initializeCommand")
    on_create_command: CommandForm | None = Field(default=None, alias="onCreateCommand")
    update_content_command: CommandForm | None = Field(default=None, alias="updateContentCommand")
    post_create_command: CommandForm | None = Field(default=None, alias="postCreateCommand")
    post_start_command: CommandForm | None = Field(default=None, alias="postStartCommand")
    post_attach_command: CommandForm | None = Field(default=None, alias="postAttachCommand")

    @field_validator("container_env", mode="before")
    @classmethod
    def _strings(cls, value: object) -> object:
        # The reference writes numbers and booleans as their text: "PORT": 3000 is PORT=3000.
        if isinstance(value, dict):
            return {key: _text(item) for key, item in value.items()}
        return value

    @property
    def dockerfile(self) -> str | None:
        return self.build.dockerfile if self.build and self.build.dockerfile else self.docker_file

    @property
    def build_context(self) -> str:
        return (self.build.context if self.build and self.build.context else self.context) or "."


def _text(value: object) -> object:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value


def read_keys(document: object, where: str) -> DevContainerKeys:
    """The model of ``document``; a ConfigError naming ``where`` and the key for anything rig refuses."""
    if not isinstance(document, dict):
        raise ConfigError(f"{where}: a dev container configuration is a JSON object, not {type(document).__name__}")
    if "dockerComposeFile" in document:
        raise ConfigError(f"{where}: {COMPOSE_REFUSAL} (dockerComposeFile)")
    try:
        keys = DevContainerKeys.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"] if not str(part).startswith(("str", "list", "dict")))
        raise ConfigError(f"{where}: {key or 'configuration'}: {first['msg']}") from None
    if keys.image and keys.dockerfile:
        raise ConfigError(f"{where}: image and build.dockerfile are both set; keep one")
    if not keys.image and not keys.dockerfile:
        raise ConfigError(
            f"{where}: neither image nor build.dockerfile is set (nor dockerComposeFile, which rig refuses)"
        )
    return keys


__all__ = [
    "COMPOSE_REFUSAL",
    "HOOK_KEYS",
    "BuildKeys",
    "CommandForm",
    "DevContainerKeys",
    "FeatureValue",
    "HostRequirements",
    "MountKeys",
    "PortAttributes",
    "read_keys",
]
