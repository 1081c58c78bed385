"""A local machine: a directory on the host where commands run as the caller (no isolation)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from providers._command import CommandRecorder, CommandResult, Redactor, describe_command, failure
from providers._machine import AttachSpec, MachineFileNotFoundError, check_timeout
from providers.local.process import run_command
from providers.local.store import MachineRecord
from rigcli.errors import InterruptedRunError, ProviderError

if TYPE_CHECKING:
    from providers.local import LocalRuntime


class LocalMachine:
    """Handle on one machine directory; relative paths are relative to ``path``."""

    provider_id = "local"

    def __init__(self, runtime: LocalRuntime, record: MachineRecord) -> None:
        self._runtime = runtime
        self._record = record
        self.id = record.id
        self.path = str(runtime.store.machine_dir(record))
        self.created_at = record.created_at
        self.source_snapshot = record.source_snapshot

    def __repr__(self) -> str:
        return f"LocalMachine(id={self.id!r}, path={self.path!r})"

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else Path(self.path) / candidate

    def _environment(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        merged = dict(os.environ)
        merged.update({str(key): str(value) for key, value in self._runtime.env.items()})
        merged.update({"RIG_MACHINE_ID": self.id, "RIG_MACHINE_DIR": self.path})
        merged.update({str(key): str(value) for key, value in (extra or {}).items()})
        return merged

    def exec(
        self,
        command: str,
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> CommandResult:
        """Run ``sh -c command`` in the machine directory, streaming output as command.* events."""
        if not isinstance(command, str) or not command.strip():
            raise ProviderError("exec needs a non-empty shell command string")
        timeout = check_timeout(timeout)
        if not Path(self.path).is_dir():
            raise ProviderError(f"Local machine {self.id} is gone (no directory at {self.path})")
        workdir = self.resolve(cwd) if cwd is not None else Path(self.path)
        if not workdir.is_dir():
            raise ProviderError(f"Working directory {workdir} does not exist in local machine {self.id}")
        context = self._runtime.context
        if context.cancellation.is_set():
            raise InterruptedRunError(f"Not starting {describe_command(command, name)}: the run was interrupted")
        redact = Redactor.from_values(self._runtime.config, env or {})
        recorder = CommandRecorder(
            context.emit, command=command, name=name, node_path=context.node_path, machine=self.id,
            provider_id=self.provider_id, redact=redact,
        )
        result = run_command(
            command, cwd=str(workdir), env=self._environment(env), timeout=timeout, recorder=recorder,
            cancellation=context.cancellation,
        )
        if check and not result.ok:
            raise failure(result, timeout=timeout, redact=redact)
        return result

    def probe(self, command: str) -> CommandResult:
        """Run a check command; never raises for a failing command (read ``ok``/``exit_code``)."""
        try:
            return self.exec(command, name="probe", check=False)
        except ProviderError as exc:
            return CommandResult(command=command, name="probe", exit_code=127, stdout="", stderr=str(exc))

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

    def snapshot_ref(self) -> dict[str, Any]:
        """Copy the machine into an immutable snapshot and return its artifact ref."""
        record = self._runtime.store.create_snapshot(Path(self.path), source_machine=self.id)
        ref = {"provider": "local", "kind": "dirSnapshot", "snapshot_id": record.id}
        self._runtime.event("snapshot.created", machine=self.id, artifact=ref)
        return ref

    snapshot = snapshot_ref

    def delete(self) -> None:
        """Remove the directory and its record; deleting a machine that is already gone is fine."""
        self._runtime.store.delete_machine(self._record)
        self._runtime.event("machine.deleted", machine=self.id)

    def attach(self, command: str) -> AttachSpec:
        """Run ``command`` on the host, attached to the terminal, in this machine's directory."""
        env = {"RIG_MACHINE_ID": self.id, "RIG_MACHINE_DIR": self.path}
        env.update({str(key): str(value) for key, value in self._runtime.env.items()})
        return AttachSpec(("sh", "-c", command), cwd=self.path, env=env)

    def to_json(self) -> dict[str, Any]:
        return {"provider": "local", "id": self.id, "path": self.path, "created_at": self.created_at,
                "source_snapshot": self.source_snapshot}


__all__ = ["LocalMachine"]
