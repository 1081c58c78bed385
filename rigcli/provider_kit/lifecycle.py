"""Mixins for a kit controller whose machines can be stopped and started, or entered with a terminal.

A ``BaseController`` that mixes in ``MachinePower`` answers ``rig stop``/``rig start``
(``SupportsPower``) with its ``stop_machine``/``start_machine``; one that mixes in
``MachineAttach`` answers ``rig shell``/``rig exec`` (``SupportsInteractive``) with its
``attach_machine``. Both are given only what ``making`` named a machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rigcli.errors import ProviderError
from rigcli.provider_api import EffectEntry, SupportsInteractive, SupportsPower

_MACHINE = "machine"


def _machine_id(resource: EffectEntry, what: str) -> str:
    if resource["kind"] != _MACHINE:
        raise ProviderError(f"Cannot {what} a {resource['kind']} ({resource['id']}): only machines")
    return resource["id"]


class MachinePower:
    """``SupportsPower`` from two hooks; both must be idempotent and raise ``RigError`` when they cannot."""

    def stop_machine(self, machine_id: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement stop_machine(machine_id)")

    def start_machine(self, machine_id: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement start_machine(machine_id)")

    def stop(self, resource: EffectEntry) -> None:
        self.stop_machine(_machine_id(resource, "stop"))

    def start(self, resource: EffectEntry) -> None:
        self.start_machine(_machine_id(resource, "start"))


class MachineAttach:
    """``SupportsInteractive`` from one hook (see ``SupportsInteractive.attach`` for what it must do)."""

    def attach_machine(
        self, machine_id: str, argv: Sequence[str] | None, *, tty: bool, env: Mapping[str, str], cwd: str | None
    ) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement attach_machine(...)")

    def attach(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> int:
        return self.attach_machine(_machine_id(resource, "attach to"), argv, tty=tty, env=env, cwd=cwd)


if TYPE_CHECKING:  # mypy checks the mixins against the hooks they implement
    _power: type[SupportsPower] = MachinePower
    _attach: type[SupportsInteractive] = MachineAttach

__all__ = ["MachineAttach", "MachinePower"]
