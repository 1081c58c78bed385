"""The ``local`` provider: machines are plain directories under the project's .rig/ (NO isolation).

Commands run as the calling user, directly on the host, with the machine directory as their
working directory. Nothing stops a command from reading or changing anything else the user can
reach. Use the ``docker`` provider when you need a boundary. What this provider does give:

- ``exec`` runs ``sh -c`` in its own process group, streams output as ``command.*`` events,
  keeps at most 1 MiB per stream in memory, and kills the whole group (SIGTERM, then SIGKILL)
  on timeout, cancellation or Ctrl-C;
- snapshots are full, independent copies (``cp -a --reflink=auto``), written aside and renamed
  into place with a completion marker, so a half-written snapshot is never used;
- machine and snapshot records live in provider storage, so ``from_id`` works from any process;
- ``rig ls`` shows a machine ``running`` while its directory exists and ``missing`` once it is
  gone; ``rig shell``/``rig exec`` run on the host in that directory (``$SHELL`` for a shell);
  there is nothing to stop or start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from providers.local.attach import login_shell
from providers.local.machine import LocalMachine
from providers.local.store import LocalStore, MachineRecord, SnapshotRecord
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.provider_api import (
    EffectEntry,
    EffectJournal,
    LiveStatus,
    ProviderPlugin,
    ProviderSetup,
    RuntimeContext,
    SupportsArtifactValidation,
    SupportsEffects,
    SupportsInteractive,
    SupportsLiveSnapshot,
    SupportsStatus,
)
from rigcli.provider_kit import BaseController, BaseRuntime, config_env, ref_id, run_attached
from rigcli.provider_kit.connect import (
    ByteStream,
    ExecStream,
    MachineFacts,
    PtyRequest,
    SupportsExecStreams,
    SupportsFileArchives,
    SupportsPortStreams,
)

PROVIDER_ID = "local"
SNAPSHOT_KIND = "dirSnapshot"


def snapshot_id_of(ref: object) -> str:
    """The snapshot id in a ``dirSnapshot`` ref (or a bare id string)."""
    return ref_id(ref, provider_id=PROVIDER_ID, kind=SNAPSHOT_KIND, key="snapshot_id", what="local snapshot")


class LocalRuntime(BaseRuntime["LocalController"]):
    """What handlers receive: make machines, find them again, list what exists."""

    def __init__(self, controller: LocalController, context: RuntimeContext) -> None:
        super().__init__(controller, context)
        self.store = controller.store

    def create_machine(self) -> LocalMachine:
        """A new, empty machine directory."""
        machine = LocalMachine(self, self.store.create_machine(self.context.effects))
        self.event("machine.created", machine=machine.id, path=machine.path, effect_id=machine.id)
        return machine

    def from_snapshot(self, ref: object) -> LocalMachine:
        """A new machine holding a copy of the snapshot's files."""
        snapshot_id = snapshot_id_of(ref)
        machine = LocalMachine(self, self.store.create_machine(self.context.effects, snapshot_id))
        self.event(
            "machine.created", machine=machine.id, path=machine.path, snapshot_id=snapshot_id, effect_id=machine.id
        )
        return machine

    def from_id(self, machine_id: str) -> LocalMachine:
        """The machine recorded under ``machine_id`` (in this or any earlier rig process)."""
        record = self.store.get_machine(machine_id)
        if record is None:
            raise ProviderError(f"Unknown local machine {machine_id!r}")
        machine = LocalMachine(self, record)
        return machine


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
        path = self.store.machine_path(resource["id"])
        if not path.is_dir():
            raise ProviderError(f"Local machine {resource['id']} is gone (no directory at {path})")
        workdir = path / cwd if cwd else path
        if not workdir.is_dir():
            raise ProviderError(f"Working directory {workdir} does not exist in local machine {resource['id']}")
        full = dict(os.environ)
        full.update({str(key): str(value) for key, value in config_env(PROVIDER_ID, self.config).items()})
        full.update({"RIG_MACHINE_ID": resource["id"], "RIG_MACHINE_DIR": str(path), **env})
        return run_attached(list(argv) if argv else login_shell(), cwd=str(workdir), env=full)

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
        from providers.local.connect import LocalExec, require_dir

        path = str(self.store.machine_path(resource["id"]))
        require_dir(path, resource["id"])
        full = dict(os.environ)
        full.update({str(key): str(value) for key, value in config_env(PROVIDER_ID, self.config).items()})
        full.update({"RIG_MACHINE_ID": resource["id"], "RIG_MACHINE_DIR": path, **env})
        program = list(argv) if argv else [*login_shell(), "-l"]
        return LocalExec(program, pty=pty, env=full, cwd=os.path.join(path, cwd) if cwd else path)

    def machine_facts(self, resource: EffectEntry) -> MachineFacts:
        from providers.local.connect import facts

        return facts(str(self.store.machine_path(resource["id"])))

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream:
        from providers.local.connect import open_port

        return open_port(host, port)  # the machine's ports are the host's

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream:
        from rigcli.provider_kit.connect_exec import exec_read_archive

        return exec_read_archive(self, resource, path)

    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None:
        """Unpacked by rig itself: the directory is the host's, so no entry may land outside it."""
        from rigcli.provider_kit.tar_unpack import unpack

        unpack(source, directory)

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


class LocalPlugin:
    provider_id = PROVIDER_ID

    def create_provider(self, setup: ProviderSetup) -> LocalController:
        return LocalController(setup)


plugin: ProviderPlugin = LocalPlugin()

__all__ = ["LocalController", "LocalMachine", "LocalPlugin", "LocalRuntime", "plugin", "snapshot_id_of"]
