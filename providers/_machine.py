"""Pieces every machine provider shares: the attach spec for terminals and file errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone

from rigcli.errors import ProviderError


@dataclass(frozen=True)
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


__all__ = ["AttachSpec", "MachineFileNotFoundError", "check_timeout", "now_iso"]
