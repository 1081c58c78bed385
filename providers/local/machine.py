"""What the local provider's handlers receive: a runtime that makes machine directories, and those machines.

A machine is a directory on the host where commands run as the caller (no isolation). The runtime
and its machines ask their controller only for its store (``StoreOwner``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from providers.local.layout import PROVIDER_ID, SNAPSHOT_KIND
from providers.local.process import run_command
from providers.local.store import LocalStore, MachineRecord
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject
from rigcli.provider_api import Cancellation, RuntimeContext
from rigcli.provider_kit import (
    AttachSpec,
    BaseMachine,
    BaseRuntime,
    CommandRecorder,
    CommandResult,
    MachineController,
    MachineFileNotFoundError,
    ref_id,
)


def snapshot_id_of(ref: object) -> str:
    """The snapshot id in a ``dirSnapshot`` ref (or a bare id string)."""
    return ref_id(ref, provider_id=PROVIDER_ID, kind=SNAPSHOT_KIND, key="snapshot_id", what="local snapshot")


class StoreOwner(MachineController, Protocol):
    """What a local runtime asks of its controller (``LocalController``): the store of machines and snapshots."""

    @property
    def store(self) -> LocalStore: ...


class LocalRuntime(BaseRuntime[StoreOwner]):
    """What handlers receive: make machines, find them again, list what exists."""

    def __init__(self, controller: StoreOwner, context: RuntimeContext) -> None:
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


class LocalMachine(BaseMachine[LocalRuntime]):
    """Handle on one machine directory; relative paths are relative to ``path``."""

    provider_id = "local"

    def __init__(self, runtime: LocalRuntime, record: MachineRecord) -> None:
        super().__init__(runtime, record.id)
        self._record = record
        self.path = str(runtime.store.machine_dir(record))
        self.created_at = record.created_at
        self.source_snapshot = record.source_snapshot

    def __repr__(self) -> str:
        return f"LocalMachine(id={self.id!r}, path={self.path!r})"

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else Path(self.path) / candidate

    def _cwd(self, cwd: str | os.PathLike[str] | None) -> str:
        if not Path(self.path).is_dir():
            raise ProviderError(f"Local machine {self.id} is gone (no directory at {self.path})")
        workdir = self.resolve(cwd) if cwd is not None else Path(self.path)
        if not workdir.is_dir():
            raise ProviderError(f"Working directory {workdir} does not exist in local machine {self.id}")
        return str(workdir)

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        merged = dict(os.environ)
        merged.update({str(key): str(value) for key, value in self._runtime.env.items()})
        merged.update({"RIG_MACHINE_ID": self.id, "RIG_MACHINE_DIR": self.path})
        merged.update({str(key): str(value) for key, value in (extra or {}).items()})
        return merged

    def _run(
        self,
        command: str,
        *,
        env: dict[str, str],
        cwd: str,
        timeout: float | None,
        recorder: CommandRecorder,
        cancellation: Cancellation,
    ) -> CommandResult:
        return run_command(command, cwd=cwd, env=env, timeout=timeout, recorder=recorder, cancellation=cancellation)

    def exists(self, path: str | os.PathLike[str]) -> bool:
        return self.resolve(path).exists()

    def read_text(self, path: str | os.PathLike[str]) -> str:
        target = self.resolve(path)
        try:
            return target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise MachineFileNotFoundError(f"No file {path} in local machine {self.id}") from None
        except IsADirectoryError:
            raise ProviderError(f"{path} is a directory in local machine {self.id}") from None

    def write_text(self, path: str | os.PathLike[str], text: str) -> None:
        target = self.resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def _snapshot(self) -> JsonObject:
        """Copy the machine into an immutable snapshot (``cp -a --reflink=auto``)."""
        record = self._runtime.store.create_snapshot(
            Path(self.path), source_machine=self.id, effects=self._runtime.context.effects
        )
        return {"provider": "local", "kind": "dirSnapshot", "snapshot_id": record.id}

    def _remove(self) -> None:
        self._runtime.store.delete_machine(self._record, self._runtime.context.effects)

    def attach(self, command: str) -> AttachSpec:
        """Run ``command`` on the host, attached to the terminal, in this machine's directory."""
        env = {"RIG_MACHINE_ID": self.id, "RIG_MACHINE_DIR": self.path}
        env.update({str(key): str(value) for key, value in self._runtime.env.items()})
        return AttachSpec(("sh", "-c", command), cwd=self.path, env=env)

    def to_json(self) -> JsonObject:
        return {
            "provider": "local",
            "id": self.id,
            "path": self.path,
            "created_at": self.created_at,
            "source_snapshot": self.source_snapshot,
        }


__all__ = ["PROVIDER_ID", "SNAPSHOT_KIND", "LocalMachine", "LocalRuntime", "StoreOwner", "snapshot_id_of"]
