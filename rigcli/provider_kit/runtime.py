"""Controller and runtime bases for a machine provider: config env, artifact refs, cleanup, events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.provider_api import (
    EventData,
    ProviderController,
    ProviderSetup,
    RuntimeContext,
    SupportsResourceCleanup,
)


class MachineController(Protocol):
    """What ``BaseRuntime`` delegates to: one controller per run, owning machine and snapshot records."""

    @property
    def provider_id(self) -> str: ...  # the provider's id, stamped on every event its runtimes emit
    @property
    def config(self) -> Mapping[str, object]: ...  # the resolved provider config from rig_config.py
    def delete_machine(self, machine_id: str) -> bool: ...  # False when it was already gone
    def list_machines(self) -> list[JsonObject]: ...  # JSON records, each with "provider" and "id"
    def list_snapshots(self) -> list[JsonObject]: ...  # artifact refs plus whatever else is known
    def delete_snapshot(self, ref: object) -> bool: ...  # False when there was nothing to remove


# Covariant, so that a machine can take any BaseRuntime[SomeController] as a BaseRuntime[MachineController].
ControllerT_co = TypeVar("ControllerT_co", bound=MachineController, covariant=True)


def config_env(provider_id: str, config: Mapping[str, object]) -> Mapping[str, object]:
    """The provider config's ``env=`` (added to every exec); a ProviderError unless it is a mapping."""
    env = config.get("env") or {}
    if not isinstance(env, Mapping):
        raise ProviderError(f"{provider_id} provider config env= must be a mapping of strings")
    return env


def ref_id(ref: object, *, provider_id: str, kind: str, key: str, what: str) -> str:
    """The id under ``key`` in this provider's ``kind`` artifact ref (or a bare id string)."""
    if isinstance(ref, str) and ref:
        return ref
    if isinstance(ref, Mapping) and ref.get("provider") == provider_id and ref.get("kind") == kind:
        value = ref.get(key)
        if isinstance(value, str) and value:
            return value
    raise ProviderError(f"Not a {what} ref: {ref!r}")


class BaseController:
    """A controller with ready-made defaults; subclasses set ``provider_id``, add ``runtime`` and ``delete_machine``."""

    provider_id: str

    def __init__(self, setup: ProviderSetup) -> None:
        self.setup = setup
        self.config: Mapping[str, object] = setup.config

    def runtime(self, context: RuntimeContext) -> object:
        raise NotImplementedError(f"{type(self).__name__} must implement runtime(context)")

    def delete_machine(self, machine_id: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must implement delete_machine(machine_id)")

    def list_machines(self) -> list[JsonObject]:
        return []

    def list_snapshots(self) -> list[JsonObject]:
        return []

    def delete_snapshot(self, ref: object) -> bool:
        """Remove a snapshot; False when there was nothing to remove (the default: no snapshots)."""
        return False

    def cleanup_resource(self, resource: Mapping[str, JsonValue]) -> None:
        """Remove what a failed workspace create left behind (from its ``*.created`` events)."""
        kind, machine, artifact = resource.get("type"), resource.get("machine"), resource.get("artifact")
        if kind == "machine.created" and isinstance(machine, str):
            self.delete_machine(machine)
        elif kind == "snapshot.created" and isinstance(artifact, Mapping):
            self.delete_snapshot(artifact)


if TYPE_CHECKING:  # mypy checks the base against the contract (and optional hook) it implements
    _controller: type[ProviderController] = BaseController
    _cleanup: type[SupportsResourceCleanup] = BaseController


class BaseRuntime(Generic[ControllerT_co]):
    """What handlers receive: events, machine deletion and listings; subclasses add machine makers."""

    def __init__(self, controller: ControllerT_co, context: RuntimeContext) -> None:
        self.controller = controller
        self.context = context
        self.config: Mapping[str, object] = controller.config
        self.env: Mapping[str, object] = config_env(controller.provider_id, controller.config)

    def event(self, kind: str, **fields: JsonValue) -> None:
        """Emit a ``kind`` event for this node, stamped with the provider id."""
        event: EventData = {
            "type": kind,
            "node_path": self.context.node_path,
            "provider_id": self.controller.provider_id,
        }
        self.context.emit({**event, **fields})

    def delete_machine(self, machine_id: str) -> bool:
        """Delete a machine by id; False when it was already gone (safe to retry)."""
        deleted = self.controller.delete_machine(machine_id)
        if deleted:
            self.event("machine.deleted", machine=machine_id)
        return deleted

    def list_machines(self) -> list[JsonObject]:
        return self.controller.list_machines()

    def list_snapshots(self) -> list[JsonObject]:
        return self.controller.list_snapshots()

    def delete_snapshot(self, ref: object) -> bool:
        return self.controller.delete_snapshot(ref)


__all__ = ["BaseController", "BaseRuntime", "MachineController", "config_env", "ref_id"]
