"""The provider kit: shared pieces for machine providers, built in or third-party.

Its names load on first use (``speed/imports.py``): a plugin importing one piece — ``rig
shell``/``rig exec`` answered from the cache needs only ``interactive`` — does not load the rest.
"""

from __future__ import annotations

from rigcli.speed.imports import lazy_attribute

# Not typing.TYPE_CHECKING (rigcli/__init__.py): mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from rigcli.provider_kit.commands import (
        CHUNK_LIMIT,
        OUTPUT_LIMIT,
        CommandFailedError,
        CommandRecorder,
        CommandResult,
        LineChunker,
        Redactor,
        TailBuffer,
        describe_command,
        exit_status,
        failure,
    )
    from rigcli.provider_kit.host_program import run_attached
    from rigcli.provider_kit.lifecycle import MachineAttach, MachinePower
    from rigcli.provider_kit.machine import AttachSpec, BaseMachine, MachineFileNotFoundError, check_timeout, now_iso
    from rigcli.provider_kit.refs import ref_id
    from rigcli.provider_kit.runtime import (
        BaseController,
        BaseRuntime,
        MachineController,
        config_env,
        stored_records,
    )

_LAZY = {
    "AttachSpec": "rigcli.provider_kit.machine",
    "BaseController": "rigcli.provider_kit.runtime",
    "BaseMachine": "rigcli.provider_kit.machine",
    "BaseRuntime": "rigcli.provider_kit.runtime",
    "CHUNK_LIMIT": "rigcli.provider_kit.commands",
    "CommandFailedError": "rigcli.provider_kit.commands",
    "CommandRecorder": "rigcli.provider_kit.commands",
    "CommandResult": "rigcli.provider_kit.commands",
    "LineChunker": "rigcli.provider_kit.commands",
    "MachineAttach": "rigcli.provider_kit.lifecycle",
    "MachineController": "rigcli.provider_kit.runtime",
    "MachineFileNotFoundError": "rigcli.provider_kit.machine",
    "MachinePower": "rigcli.provider_kit.lifecycle",
    "OUTPUT_LIMIT": "rigcli.provider_kit.commands",
    "Redactor": "rigcli.provider_kit.commands",
    "TailBuffer": "rigcli.provider_kit.commands",
    "check_timeout": "rigcli.provider_kit.machine",
    "config_env": "rigcli.provider_kit.runtime",
    "describe_command": "rigcli.provider_kit.commands",
    "exit_status": "rigcli.provider_kit.commands",
    "failure": "rigcli.provider_kit.commands",
    "now_iso": "rigcli.provider_kit.machine",
    "ref_id": "rigcli.provider_kit.refs",
    "run_attached": "rigcli.provider_kit.host_program",
    "stored_records": "rigcli.provider_kit.runtime",
}


def __getattr__(name: str) -> object:
    return lazy_attribute(__name__, name, _LAZY, globals())


__all__ = [
    "CHUNK_LIMIT",
    "OUTPUT_LIMIT",
    "AttachSpec",
    "BaseController",
    "BaseMachine",
    "BaseRuntime",
    "CommandFailedError",
    "CommandRecorder",
    "CommandResult",
    "LineChunker",
    "MachineAttach",
    "MachineController",
    "MachineFileNotFoundError",
    "MachinePower",
    "Redactor",
    "TailBuffer",
    "check_timeout",
    "config_env",
    "describe_command",
    "exit_status",
    "failure",
    "now_iso",
    "ref_id",
    "run_attached",
    "stored_records",
]
