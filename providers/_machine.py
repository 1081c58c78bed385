"""Machine pieces for the built-in providers, re-exported from ``rigcli.provider_kit.machine``."""

from __future__ import annotations

from rigcli.provider_kit.machine import AttachSpec, MachineFileNotFoundError, check_timeout, now_iso

__all__ = ["AttachSpec", "MachineFileNotFoundError", "check_timeout", "now_iso"]
