"""The provider kit: shared pieces for machine providers, built in or third-party."""

from __future__ import annotations

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
from rigcli.provider_kit.runtime import (
    BaseController,
    BaseRuntime,
    MachineController,
    config_env,
    ref_id,
    stored_records,
)

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
