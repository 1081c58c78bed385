"""Controller and runtime bases for a machine provider: config env, artifact refs, cleanup, events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from rigcli.errors import ProviderError
from rigcli.provider_api import EventData, ProviderSetup, RuntimeContext


class MachineController(Protocol):
    """What ``BaseRuntime`` delegates to: one controller per run, owning machine and snapshot records."""

    provider_id: str  # the provider's id, stamped on every event its runtimes emit
    config: Mapping[str, Any]  # the resolved provider config from rig_config.py

    def delete_machine(self, machine_id: str) -> bool: ...  # False when it was already gone
    def list_machines(self) -> list[dict[str, Any]]: ...  # JSON records, each with "provider" and "id"
    def list_snapshots(self) -> list[dict[str, Any]]: ...  # artifact refs plus whatever else is known
    def delete_snapshot(self, ref: Any) -> bool: ...  # False when there was nothing to remove


ControllerT = TypeVar("ControllerT", bound=MachineController)


def config_env(provider_id: str, config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The provider config's ``env=`` (added to every exec); a ProviderError unless it is a mapping."""
    env = config.get("env") or {}
    if not isinstance(env, Mapping):
        raise ProviderError(f"{provider_id} provider config env= must be a mapping of strings")
    return env


def ref_id(ref: Any, *, provider_id: str, kind: str, key: str, what: str) -> str:
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
        self.config: Mapping[str, Any] = setup.config

    def runtime(self, context: RuntimeContext) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement runtime(context)")

    def delete_machine(self, machine_id: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must implement delete_machine(machine_id)")

    def list_machines(self) -> list[dict[str, Any]]:
        return []

    def list_snapshots(self) -> list[dict[str, Any]]:
        return []

    def delete_snapshot(self, ref: Any) -> bool:
        """Remove a snapshot; False when there was nothing to remove (the default: no snapshots)."""
        return False

    def cleanup_resource(self, resource: Mapping[str, Any]) -> None:
        """Remove what a failed workspace create left behind (from its ``*.created`` events)."""
        if resource.get("type") == "machine.created" and isinstance(resource.get("machine"), str):
            self.delete_machine(resource["machine"])
        elif resource.get("type") == "snapshot.created" and isinstance(resource.get("artifact"), Mapping):
            self.delete_snapshot(resource["artifact"])


class BaseRuntime(Generic[ControllerT]):
    """What handlers receive: events, machine deletion and listings; subclasses add machine makers."""

    def __init__(self, controller: ControllerT, context: RuntimeContext) -> None:
        self.controller = controller
        self.context = context
        self.config: Mapping[str, Any] = controller.config
        self.env: Mapping[str, Any] = config_env(controller.provider_id, controller.config)

    def event(self, kind: str, **fields: Any) -> None:
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

    def list_machines(self) -> list[dict[str, Any]]:
        return self.controller.list_machines()

    def list_snapshots(self) -> list[dict[str, Any]]:
        return self.controller.list_snapshots()

    def delete_snapshot(self, ref: Any) -> bool:
        return self.controller.delete_snapshot(ref)


__all__ = ["BaseController", "BaseRuntime", "MachineController", "config_env", "ref_id"]
