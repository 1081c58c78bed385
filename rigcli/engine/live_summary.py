"""A workspace's live status from its providers' answers about its machines: the rule both ``rig ls`` ways share.

What a workspace has is the journal's (its live effects, owned by the record's id, carried on the
record as ``resources``), never a copy. A workspace is as alive as its least alive machine. On
plain ``(state, detail)`` pairs and the record's ``resources`` list, importing nothing: ``rig ls``
reads records as JSON from the state file (``cli/commands/listing.py``), without the records' classes.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rigcli.provider_api import EffectEntry

Live = tuple[str, str]  # (state: running | stopped | missing | unknown, detail)
# A workspace is as alive as its least alive machine: this order picks which state it shows.
_WORST_FIRST = ("unknown", "missing", "stopped", "running")


class Resource:
    """One live effect of a workspace as a provider is asked about it."""

    __slots__ = ("entry", "provider_id")

    def __init__(self, provider_id: str, entry: EffectEntry) -> None:
        self.provider_id = provider_id
        self.entry = entry


def resources_in(resources: Sequence[object]) -> list[Resource]:
    """A workspace's live effects (its record's ``resources``: requested or confirmed), in journal order."""
    found: list[Resource] = []
    for item in resources:
        if not isinstance(item, dict):
            continue
        effect_id, provider_id, kind = item.get("effect_id"), item.get("provider_id"), item.get("kind")
        resource = item.get("resource")
        if isinstance(effect_id, str) and isinstance(provider_id, str) and isinstance(kind, str):
            details = dict(resource) if isinstance(resource, dict) else {}
            found.append(Resource(provider_id, {"id": effect_id, "kind": kind, "resource": details}))
    return found


def summarize_machines(resources: Sequence[object], status: str, answers: Mapping[str, Live]) -> Live:
    """The state of a workspace (its ``resources`` and record ``status``): its least alive machine's
    (by effect id in ``answers``), with that machine's detail."""
    machines = [answers[item.entry["id"]] for item in resources_in(resources) if item.entry["id"] in answers]
    if not machines:
        return ("unknown", "no machine is recorded for it" if status != "creating" else "no machine yet")
    worst = min(machines, key=lambda live: _WORST_FIRST.index(live[0]))
    differing = sum(1 for live in machines if live[0] == worst[0])
    if len(machines) > 1 and differing < len(machines):
        return (worst[0], f"{worst[1]} ({differing} of {len(machines)} machines)")
    return worst


__all__ = ["Live", "Resource", "resources_in", "summarize_machines"]
