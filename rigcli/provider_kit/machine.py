"""The machine side of a provider: a base class for exec/probe/snapshot/delete, attach specs, file errors."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import field
from datetime import datetime, timezone
from typing import Generic, TypeVar

from rigcli.errors import InterruptedRunError, ProviderError
from rigcli.jsonutil import JsonObject
from rigcli.provider_api import Cancellation
from rigcli.provider_kit.commands import CommandRecorder, CommandResult, Redactor, describe_command, failure
from rigcli.provider_kit.runtime import BaseRuntime, MachineController
from rigcli.speed.records import lazy_dataclass

RuntimeT = TypeVar("RuntimeT", bound=BaseRuntime[MachineController])


@lazy_dataclass(frozen=True)
class AttachSpec:
    """How to run an interactive command in a machine from the user's terminal."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)


class MachineFileNotFoundError(ProviderError, FileNotFoundError):
    """``read_text`` of a path that does not exist in the machine."""


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def check_timeout(timeout: float | None) -> float | None:
    if timeout is not None and not timeout > 0:
        raise ProviderError(f"exec timeout must be a positive number of seconds, not {timeout!r}")
    return None if timeout is None else float(timeout)


class BaseMachine(Generic[RuntimeT]):
    """A machine as handlers see it: checked exec, a probe that never raises, snapshot and delete events."""

    provider_id: str  # stamped on command.started events

    def __init__(self, runtime: RuntimeT, machine_id: str) -> None:
        self._runtime = runtime
        self.id = machine_id

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
        """Run ``sh -c command`` in the machine, streaming output as command.* events.

        With ``check`` (the default) a non-zero exit or a timeout raises CommandFailedError, whose
        message names the command and its exit code; secret values are masked in events and errors.
        """
        if not isinstance(command, str) or not command.strip():
            raise ProviderError("exec needs a non-empty shell command string")
        timeout = check_timeout(timeout)
        workdir = self._cwd(cwd)
        context = self._runtime.context
        if context.cancellation.is_set():
            raise InterruptedRunError(f"Not starting {describe_command(command, name)}: the run was interrupted")
        redact = Redactor.from_values(self._runtime.config, env or {})
        recorder = CommandRecorder(
            context.emit,
            command=command,
            name=name,
            node_path=context.node_path,
            machine=self.id,
            provider_id=self.provider_id,
            redact=redact,
        )
        result = self._run(
            command,
            env=self._env(env),
            cwd=workdir,
            timeout=timeout,
            recorder=recorder,
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

    def snapshot_ref(self) -> JsonObject:
        """Snapshot the machine and return its artifact ref (emits ``snapshot.created``)."""
        ref = self._snapshot()
        self._runtime.event("snapshot.created", machine=self.id, artifact=ref)
        return ref

    snapshot = snapshot_ref

    def delete(self) -> None:
        """Remove the machine; deleting one that is already gone is fine (emits ``machine.deleted``)."""
        self._remove()
        self._runtime.context.effects.deleted(self.id)
        self._runtime.event("machine.deleted", machine=self.id)

    # -- hooks for subclasses: _run and _remove always, the others where the default does not fit ----------

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
        """Run to completion within ``timeout``: ``recorder.started()``, ``feed`` output, return ``finish(...)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement _run")

    def _cwd(self, cwd: str | os.PathLike[str] | None) -> str:
        """Where a command runs (``.``: the machine's default); raise ProviderError when it cannot run there."""
        return "." if cwd is None else os.fspath(cwd)

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        """The command's environment: the provider's ``env=`` config, then the caller's ``env``."""
        return {str(key): str(value) for key, value in {**self._runtime.env, **(extra or {})}.items()}

    def _snapshot(self) -> JsonObject:
        """Snapshot the machine and return the artifact ref; by default machines cannot."""
        raise ProviderError(f"{self.provider_id} machines cannot be snapshotted")

    def _remove(self) -> None:
        """Remove the machine and its record; one that is already gone is fine."""
        raise NotImplementedError(f"{type(self).__name__} must implement _remove")


__all__ = ["AttachSpec", "BaseMachine", "MachineFileNotFoundError", "check_timeout", "now_iso"]
