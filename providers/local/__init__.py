"""The ``local`` provider: machines are plain directories under the project's .rig/ (NO isolation).

Commands run as the calling user, directly on the host, with the machine directory as their
working directory. Nothing stops a command from reading or changing anything else the user can
reach. Use the ``docker`` provider when you need a boundary. What this provider does give:

- ``exec`` runs ``sh -c`` in its own process group, streams output as ``command.*`` events,
  keeps at most 1 MiB per stream in memory, and kills the whole group (SIGTERM, then SIGKILL)
  on timeout, cancellation or Ctrl-C;
- snapshots are full, independent copies (``cp -a --reflink=auto``), written aside and renamed
  into place with a completion marker, so a half-written snapshot is never used;
- machine and snapshot records live in provider storage, so ``from_id`` works from any process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.local.machine import LocalMachine
from providers.local.store import LocalStore, MachineRecord, SnapshotRecord
from rigcli.errors import ProviderError
from rigcli.events import Event
from rigcli.provider_api import ProviderSetup, RuntimeContext

PROVIDER_ID = "local"
SNAPSHOT_KIND = "dirSnapshot"


def snapshot_id_of(ref: Any) -> str:
    """The snapshot id in a ``dirSnapshot`` ref (or a bare id string)."""
    if isinstance(ref, str) and ref:
        return ref
    if isinstance(ref, Mapping) and ref.get("provider") == PROVIDER_ID and ref.get("kind") == SNAPSHOT_KIND:
        snapshot_id = ref.get("snapshot_id")
        if isinstance(snapshot_id, str) and snapshot_id:
            return snapshot_id
    raise ProviderError(f"Not a local snapshot ref: {ref!r}")


class LocalRuntime:
    """What handlers receive: make machines, find them again, list what exists."""

    def __init__(self, controller: LocalController, context: RuntimeContext) -> None:
        self.controller = controller
        self.context = context
        self.store = controller.store
        self.config = controller.config
        env = controller.config.get("env") or {}
        if not isinstance(env, Mapping):
            raise ProviderError("local provider config env= must be a mapping of strings")
        self.env: Mapping[str, Any] = env

    def event(self, kind: str, **fields: Any) -> None:
        event: Event = {"type": kind, "node_path": self.context.node_path, "provider_id": PROVIDER_ID}
        self.context.emit({**event, **fields})

    def create_machine(self) -> LocalMachine:
        """A new, empty machine directory."""
        machine = LocalMachine(self, self.store.create_machine())
        self.event("machine.created", machine=machine.id, path=machine.path)
        return machine

    def from_snapshot(self, ref: Any) -> LocalMachine:
        """A new machine holding a copy of the snapshot's files."""
        snapshot_id = snapshot_id_of(ref)
        machine = LocalMachine(self, self.store.create_machine(snapshot_id))
        self.event("machine.created", machine=machine.id, path=machine.path, snapshot_id=snapshot_id)
        return machine

    def from_id(self, machine_id: str) -> LocalMachine:
        """The machine recorded under ``machine_id`` (in this or any earlier rig process)."""
        record = self.store.get_machine(machine_id)
        if record is None:
            raise ProviderError(f"Unknown local machine {machine_id!r}")
        machine = LocalMachine(self, record)
        return machine

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


class LocalController:
    """Created once per run from the provider setup; hands out runtimes per node."""

    provider_id = PROVIDER_ID

    def __init__(self, setup: ProviderSetup) -> None:
        self.setup = setup
        self.config: Mapping[str, Any] = setup.config
        self.store = LocalStore(setup.state_dir, setup.storage)

    def runtime(self, context: RuntimeContext) -> LocalRuntime:
        return LocalRuntime(self, context)

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool:
        """A snapshot ref is valid while its directory and completion marker exist."""
        try:
            return self.store.is_complete(snapshot_id_of(ref))
        except ProviderError:
            return False

    def delete_machine(self, machine_id: str) -> bool:
        record = self.store.get_machine(machine_id)
        if record is None:
            return False
        self.store.delete_machine(record)
        return True

    def cleanup_resource(self, resource: Mapping[str, Any]) -> None:
        """Remove what a failed workspace create left behind (from its ``*.created`` events)."""
        if resource.get("type") == "machine.created" and isinstance(resource.get("machine"), str):
            self.delete_machine(resource["machine"])
        elif resource.get("type") == "snapshot.created" and isinstance(resource.get("artifact"), Mapping):
            self.delete_snapshot(resource["artifact"])

    def list_machines(self) -> list[dict[str, Any]]:
        return [self._machine_json(record) for record in self.store.list_machines()]

    def list_snapshots(self) -> list[dict[str, Any]]:
        return [self._snapshot_json(record) for record in self.store.list_snapshots()]

    def delete_snapshot(self, ref: Any) -> bool:
        """Remove a snapshot's files and record; False when there was nothing to remove."""
        return self.store.delete_snapshot(snapshot_id_of(ref))

    def _machine_json(self, record: MachineRecord) -> dict[str, Any]:
        path = self.store.machine_dir(record)
        return {"provider": PROVIDER_ID, "id": record.id, "path": str(path), "created_at": record.created_at,
                "source_snapshot": record.source_snapshot, "exists": path.is_dir()}

    def _snapshot_json(self, record: SnapshotRecord) -> dict[str, Any]:
        return {
            "provider": PROVIDER_ID, "kind": SNAPSHOT_KIND, "snapshot_id": record.id,
            "path": str(self.store.root / record.path), "created_at": record.created_at,
            "source_machine": record.source_machine, "complete": self.store.is_complete(record.id),
        }


class LocalPlugin:
    provider_id = PROVIDER_ID

    def create_provider(self, setup: ProviderSetup) -> LocalController:
        return LocalController(setup)


plugin = LocalPlugin()

__all__ = ["LocalController", "LocalMachine", "LocalPlugin", "LocalRuntime", "plugin", "snapshot_id_of"]
