"""What expiry did (or, with ``--dry-run``, would do): the report of ``rig reap`` and of every command's own reap.

Apart from the reaper so that a command with nothing due (one indexed query) never imports it.
"""

from __future__ import annotations

from dataclasses import field

from rigcli.jsonutil import JsonObject
from rigcli.speed.records import lazy_dataclass


@lazy_dataclass(frozen=True)
class ReapItem:
    """One workspace the reaper acted on (or, with ``--dry-run``, would have)."""

    workspace: str
    workflow: str
    action: str  # "remove" | "stop"
    reason: str  # "expired" | "idle"
    detail: str  # when it expired, or since when it was unused
    error: str | None = None

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "workspace": self.workspace,
            "workflow": self.workflow,
            "action": self.action,
            "reason": self.reason,
            "detail": self.detail,
        }
        if self.error is not None:
            data["error"] = self.error
        return data


@lazy_dataclass
class ReapReport:
    """``rig reap``: what was (or would be) removed or stopped, and what failed."""

    dry_run: bool
    reaped: list[ReapItem] = field(default_factory=list)
    failed: list[ReapItem] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return {
            "dry_run": self.dry_run,
            "reaped": [item.to_json() for item in self.reaped],
            "failed": [item.to_json() for item in self.failed],
        }


__all__ = ["ReapItem", "ReapReport"]
