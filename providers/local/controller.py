"""The local provider's controller: machines are directories, snapshots complete copies (see the package)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from providers.local.attach import attach_in, login_shell
from providers.local.changes import changed_files
from providers.local.layout import FILES
from providers.local.machine import PROVIDER_ID, SNAPSHOT_KIND, LocalRuntime, snapshot_id_of
from providers.local.store import LocalStore, MachineRecord, SnapshotRecord
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.provider_api import (
    EffectEntry,
    EffectJournal,
    LiveStatus,
    MachineChange,
    ProviderSetup,
    RuntimeContext,
    SupportsArtifactValidation,
    SupportsChanges,
    SupportsEffects,
    SupportsInteractive,
    SupportsLiveSnapshot,
    SupportsStatus,
)
from rigcli.provider_kit import BaseController
from rigcli.provider_kit.connect import (
    ByteStream,
    ExecStream,
    MachineFacts,
    PtyRequest,
    SupportsExecStreams,
    SupportsFileArchives,
    SupportsPortStreams,
)
from rigcli.provider_kit.runtime import config_env
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import providers.local.connect as local_connect
    import rigcli.provider_kit.connect_exec as connect_exec
    import rigcli.provider_kit.tar_unpack as tar_unpack
else:
    local_connect = lazy_module("providers.local.connect")
    connect_exec = lazy_module("rigcli.provider_kit.connect_exec")
    tar_unpack = lazy_module("rigcli.provider_kit.tar_unpack")


class LocalController(BaseController):
    """Created once per run from the provider setup; hands out runtimes per node."""

    provider_id = PROVIDER_ID

    def __init__(self, setup: ProviderSetup) -> None:
        super().__init__(setup)
        self.store = LocalStore(setup.state_dir, setup.storage)

    def runtime(self, context: RuntimeContext) -> LocalRuntime:
        return LocalRuntime(self, context)

    def validate_artifact(self, ref: Mapping[str, JsonValue]) -> bool:
        """A snapshot ref is valid while its directory and completion marker exist."""
        try:
            return self.store.is_complete(snapshot_id_of(ref))
        except ProviderError:
            return False

    def delete_machine(self, machine_id: str) -> bool:
        record = self.store.get_machine(machine_id)
        if record is None:
            return False
        self.store.delete_machine(record, self.setup.effects)
        return True

    def machine_source(self, machine_id: str) -> JsonObject | None:
        """The snapshot a machine was copied from (``rig fork --from`` replaces it with a copy of the machine)."""
        record = self.store.get_machine(machine_id)
        if record is None or record.source_snapshot is None:
            return None
        return {"provider": PROVIDER_ID, "kind": SNAPSHOT_KIND, "snapshot_id": record.source_snapshot}

    def snapshot_machine(self, machine_id: str, effects: EffectJournal) -> JsonObject:
        """A snapshot of the machine's directory as it is now: a copy, like ``snapshot_ref`` (no pause:
        a process writing meanwhile may leave a file half-written in the copy)."""
        record = self.store.get_machine(machine_id)
        path = self.store.machine_dir(record) if record is not None else None
        if record is None or path is None or not path.is_dir():
            raise ProviderError(f"Local machine {machine_id} is gone; there is nothing to snapshot")
        snapshot = self.store.create_snapshot(path, source_machine=machine_id, effects=effects)
        return {"provider": PROVIDER_ID, "kind": SNAPSHOT_KIND, "snapshot_id": snapshot.id}

    def remove_effect(self, effect: EffectEntry) -> bool:
        """Remove a journaled (or found) machine or snapshot and its half-made copies; False if gone."""
        removed = self.store.remove_effect(effect["id"])
        self.setup.effects.deleted(effect["id"])
        return removed

    def find_effects(self) -> list[EffectEntry]:
        """Machine and snapshot directories (and records) under this project's .rig/ that rig made."""
        return self.store.find_effects()

    def machine_changes(self, machine_id: str) -> list[MachineChange]:
        """The machine directory's files against the snapshot it was copied from (``changes.py``);
        with that snapshot gone, the files written after the machine was made."""
        record = self.store.get_machine(machine_id)
        path = str(self.store.machine_path(machine_id))
        source = None if record is None else record.source_snapshot
        if source is not None and self.store.is_complete(source):
            return changed_files(path, str(self.store.snapshot_dir(source) / FILES), None)
        # Made empty (no snapshot), everything in it was added since; else the files newer than it.
        return changed_files(path, None, record.created_at if record is not None and source is not None else None)

    def machine_status(self, machine_id: str) -> LiveStatus:
        """A directory has no processes of its own: there while it exists, missing once it is gone."""
        path = self.store.machine_path(machine_id)
        shown = os.path.relpath(path, self.setup.project_dir)
        if path.is_dir():
            return LiveStatus("running", f"directory {shown}")
        return LiveStatus("missing", f"directory {shown} is gone")

    def attach(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> int:
        """Run ``argv`` (or ``$SHELL``) on the host in the machine's directory, with its environment."""
        return attach_in(self.setup.state_dir, self.config, resource["id"], argv, env=env, cwd=cwd)

    # -- connect: ssh-proxy, forward, cp (providers/local/connect.py) ------------------------------------
    def open_exec(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        pty: PtyRequest | None,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> ExecStream:
        """A host process in the machine's directory (or ``cwd`` there), with the machine's environment."""

        path = str(self.store.machine_path(resource["id"]))
        local_connect.require_dir(path, resource["id"])
        full = dict(os.environ)
        full.update({str(key): str(value) for key, value in config_env(PROVIDER_ID, self.config).items()})
        full.update({"RIG_MACHINE_ID": resource["id"], "RIG_MACHINE_DIR": path, **env})
        program = list(argv) if argv else [*login_shell(), "-l"]
        return local_connect.LocalExec(program, pty=pty, env=full, cwd=os.path.join(path, cwd) if cwd else path)

    def machine_facts(self, resource: EffectEntry) -> MachineFacts:
        return local_connect.facts(str(self.store.machine_path(resource["id"])))

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream:
        return local_connect.open_port(host, port)  # the machine's ports are the host's

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream:
        return connect_exec.exec_read_archive(self, resource, path)

    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None:
        """Unpacked by rig itself: the directory is the host's, so no entry may land outside it."""

        tar_unpack.unpack(source, directory)

    def path_kind(self, resource: EffectEntry, path: str) -> str | None:
        return "dir" if os.path.isdir(path) else "file" if os.path.lexists(path) else None

    def list_machines(self) -> list[JsonObject]:
        return [self._machine_json(record) for record in self.store.list_machines()]

    def list_snapshots(self) -> list[JsonObject]:
        return [self._snapshot_json(record) for record in self.store.list_snapshots()]

    def delete_snapshot(self, ref: object) -> bool:
        """Remove a snapshot's files and record; False when there was nothing to remove."""
        return self.store.delete_snapshot(snapshot_id_of(ref), self.setup.effects)

    def _machine_json(self, record: MachineRecord) -> JsonObject:
        path = self.store.machine_dir(record)
        return {
            "provider": PROVIDER_ID,
            "id": record.id,
            "path": str(path),
            "created_at": record.created_at,
            "source_snapshot": record.source_snapshot,
            "exists": path.is_dir(),
        }

    def _snapshot_json(self, record: SnapshotRecord) -> JsonObject:
        return {
            "provider": PROVIDER_ID,
            "kind": SNAPSHOT_KIND,
            "snapshot_id": record.id,
            "path": str(self.store.root / record.path),
            "created_at": record.created_at,
            "source_machine": record.source_machine,
            "complete": self.store.is_complete(record.id),
        }


if TYPE_CHECKING:  # mypy checks the optional hooks against the contract (cleanup comes from BaseController)
    _validates: type[SupportsArtifactValidation] = LocalController
    _effects: type[SupportsEffects] = LocalController
    _status: type[SupportsStatus] = LocalController
    _interactive: type[SupportsInteractive] = LocalController
    _live: type[SupportsLiveSnapshot] = LocalController
    _exec: type[SupportsExecStreams] = LocalController
    _ports: type[SupportsPortStreams] = LocalController
    _files: type[SupportsFileArchives] = LocalController
    _changes: type[SupportsChanges] = LocalController


__all__ = ["LocalController"]
