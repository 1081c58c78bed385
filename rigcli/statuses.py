"""Every status and reason code rig records or shows, each spelled once, as a ``Literal`` type.

A typo in a status or a code is a mypy error wherever it is used; the runtime tuples below are
read off the types, so adding a value is one line in its ``Literal`` (and, for a reason code, its
message in ``REASON_MESSAGES`` beside it: ``tests/cachekeys`` fails when one lacks the other).
The values are the strings stored in the state database and shown in ``--json`` documents:
never rename one (existing databases and scripts read them).

``Literal`` rather than ``Enum``: the values stay plain ``str`` at run time, so rows read from
the database need no conversion (a cached plan reads thousands) and JSON output is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, get_args

# A node run in the run journal (``workflow_node_runs.status``): recorded ``running`` before
# its handler starts, then finished as one of the others in one transaction. ``abandoned``: a run
# its rig left ``running`` (killed), closed later by a rig that proved that process gone or saw
# a newer run of the node; its ``error`` holds the evidence.
RunStatus = Literal["running", "succeeded", "failed", "interrupted", "abandoned"]

# A run or an apply as people see it (``rig logs``, ``rig runs``): ``in-doubt`` when it was left
# ``running`` by a rig process that is gone (never stored).
ShownRunStatus = Literal[RunStatus, "in-doubt"]
# A task within one apply (``rig runs``): its run's status, reused (``cached``), or never reached
# because the apply stopped first (``skipped``).
HistoryNodeStatus = Literal[ShownRunStatus, "cached", "skipped"]

# A workspace record (``workspaces.status``): creating → ready | failed → removing. ``reap-failed``:
# expiry (``rig reap``, or any command) could not remove or stop it; it stays, marked, until a reap
# or ``rm`` succeeds.
WorkspaceStatus = Literal["creating", "ready", "failed", "removing", "reap-failed"]

# An entry of the effects journal (``effects.status``): requested → confirmed → deleted, or
# forgotten (``rig gc --forget-unreachable``: no provider can be asked about it; kept with why).
EffectStatus = Literal["requested", "confirmed", "deleted", "forgotten"]
# An effect as ``rig gc`` sees it: journaled, or ``found`` by its provider but never journaled
# (never stored).
SeenEffectStatus = Literal[EffectStatus, "found"]

# A workspace's machines as their provider sees them now (``rig ls``'s live column, DESIGN §11):
# a provider's answer for one machine, and the workspace's (the least alive of its machines').
LiveState = Literal["running", "stopped", "missing", "unknown"]

# A path of a machine's files since the machine was made (``SupportsChanges``: what ``rig fork NAME
# --replace`` would throw away).
ChangeKind = Literal["added", "changed", "deleted"]

# What ``rig stop``/``rig start`` last did to a workspace's machines (``workspaces.power``):
# ``stopping``/``starting`` is written before the provider is asked, the other once it answered.
PowerStatus = Literal["stopping", "stopped", "starting", "started"]

# A task in a plan or in ``rig cache explain``.
PlanStatus = Literal["cached", "pending"]

# A recorded run as ``rig cache ls`` shows it (``in-doubt``: left running by a dead process).
CacheEntryStatus = Literal["cached", "invalidated", "running", "in-doubt"]

# A provider check (``SupportsChecks``): ``required`` fails a run in require mode; ``error``: the
# provider cannot serve a run as configured right now (counted as ``ok`` in fingerprints).
CheckStatus = Literal["ok", "required", "error"]

# Why a task is cached or pending (DESIGN §3); each has its message in REASON_MESSAGES.
ReasonCode = Literal[
    "cached",
    "no-previous-run",
    "task-changed",
    "provider-changed",
    "upstream-changed",
    "invalidated",
    "expired",
    "output-schema-invalid",
    "artifact-invalid",
    "upstream-pending",
    "in-doubt",
    "previous-run-failed",
    "previous-run-interrupted",
    "running-elsewhere",
]

REASON_MESSAGES: Final[Mapping[ReasonCode, str]] = {
    "cached": "cached",
    "no-previous-run": "no previous run",
    "task-changed": "task definition changed",
    "provider-changed": "provider configuration changed",
    "upstream-changed": "an upstream task ran again",
    "invalidated": "cache entry was invalidated",
    "expired": "cache_ttl expired",
    "output-schema-invalid": "cached output no longer matches the output schema",
    "artifact-invalid": "cached artifact is no longer valid",
    "upstream-pending": "upstream output is pending",
    "in-doubt": "left running by a rig process that is gone",
    "previous-run-failed": "the previous run failed",
    "previous-run-interrupted": "the previous run was interrupted",
    "running-elsewhere": "another rig is running it now",
}

RUN_STATUSES: Final[tuple[RunStatus, ...]] = get_args(RunStatus)
FINISHED_STATUSES: Final[frozenset[RunStatus]] = frozenset(status for status in RUN_STATUSES if status != "running")
WORKSPACE_STATUSES: Final[tuple[WorkspaceStatus, ...]] = get_args(WorkspaceStatus)
EFFECT_STATUSES: Final[tuple[EffectStatus, ...]] = get_args(EffectStatus)
LIVE_EFFECT_STATUSES: Final[tuple[EffectStatus, ...]] = ("requested", "confirmed")  # may exist out there
REASON_CODES: Final[tuple[ReasonCode, ...]] = get_args(ReasonCode)
LIVE_STATES: Final[tuple[LiveState, ...]] = get_args(LiveState)
POWER_STATUSES: Final[tuple[PowerStatus, ...]] = get_args(PowerStatus)

__all__ = [
    "EFFECT_STATUSES",
    "FINISHED_STATUSES",
    "LIVE_EFFECT_STATUSES",
    "LIVE_STATES",
    "POWER_STATUSES",
    "REASON_CODES",
    "REASON_MESSAGES",
    "RUN_STATUSES",
    "WORKSPACE_STATUSES",
    "CacheEntryStatus",
    "ChangeKind",
    "CheckStatus",
    "EffectStatus",
    "HistoryNodeStatus",
    "LiveState",
    "PlanStatus",
    "PowerStatus",
    "ReasonCode",
    "RunStatus",
    "SeenEffectStatus",
    "ShownRunStatus",
    "WorkspaceStatus",
]
