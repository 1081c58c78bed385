"""A workspace's live status from its providers' answers about its machines: the rule both ``rig ls`` ways share.

What a workspace has is the journal's (its live effects, owned by the record's id, carried on the
record as ``resources``), never a copy. A workspace is as alive as its least alive machine.
Imports no more than the records it reads (``rig ls``'s lean path, ``cli/commands/lean_ls.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from rigcli.provider_api import EffectEntry, LiveStatus
from rigcli.records import WorkspaceRecord
from rigcli.statuses import LiveState

# A workspace is as alive as its least alive machine: this order picks which state it shows.
_WORST_FIRST: tuple[LiveState, ...] = ("unknown", "missing", "stopped", "running")


class Resource:
    """One live effect of a workspace as a provider is asked about it."""

    __slots__ = ("entry", "provider_id")

    def __init__(self, provider_id: str, entry: EffectEntry) -> None:
        self.provider_id = provider_id
        self.entry = entry


def resources_of(record: WorkspaceRecord) -> list[Resource]:
    """The workspace's live effects (requested or confirmed), in journal order."""
    found: list[Resource] = []
    for item in record.resources:
        if not isinstance(item, dict):
            continue
        effect_id, provider_id, kind = item.get("effect_id"), item.get("provider_id"), item.get("kind")
        resource = item.get("resource")
        if isinstance(effect_id, str) and isinstance(provider_id, str) and isinstance(kind, str):
            details = dict(resource) if isinstance(resource, dict) else {}
            found.append(Resource(provider_id, {"id": effect_id, "kind": kind, "resource": details}))
    return found


def summarize_statuses(record: WorkspaceRecord, statuses: Mapping[str, LiveStatus]) -> LiveStatus:
    """The workspace's state: its least alive machine's (by effect id in ``statuses``), with that machine's detail."""
    machines = [statuses[item.entry["id"]] for item in resources_of(record) if item.entry["id"] in statuses]
    if not machines:
        why = "no machine is recorded for it" if record.status != "creating" else "no machine yet"
        return LiveStatus("unknown", why)
    worst = min(machines, key=lambda status: _WORST_FIRST.index(status.state))
    differing = sum(1 for status in machines if status.state == worst.state)
    if len(machines) > 1 and differing < len(machines):
        return LiveStatus(worst.state, f"{worst.detail} ({differing} of {len(machines)} machines)")
    return worst


__all__ = ["Resource", "resources_of", "summarize_statuses"]
