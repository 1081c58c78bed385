"""Controller and runtime bases for a machine provider: config env, artifact refs, the effects journal, events.

The journal comes with the kit: a runtime makes each machine or snapshot inside
``with self.making(kind) as new_id:`` (journaled ``requested`` before, ``confirmed`` after, the
resource named by ``new_id``), and ``BaseController`` answers ``remove_effect`` and
``find_effects`` (``SupportsEffects``) from ``delete_machine``/``delete_snapshot`` and
``list_machines``/``list_snapshots``. So ``rig rm`` removes what a cut-off create made, and
``rig gc`` what nothing live refers to, without the provider writing either. ``rig ls`` shows
each workspace's machine as ``machine_status`` says it is (``SupportsStatus``); the mixins in
``provider_kit.lifecycle`` add ``rig stop``/``rig start`` and ``rig shell``/``rig exec``, and
``machine_changes`` lets ``rig fork NAME --replace`` say what it would throw away (``SupportsChanges``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from rigcli.errors import ProviderError, RigError
from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.provider_api import (
    EffectEntry,
    EffectJournal,
    EventData,
    KeyValueStore,
    LiveStatus,
    MachineChange,
    ProviderController,
    ProviderSetup,
    RuntimeContext,
    SupportsChanges,
    SupportsEffects,
    SupportsLiveSnapshot,
    SupportsStatus,
    new_effect_id,
)
from rigcli.provider_kit.refs import ref_id

MACHINE, SNAPSHOT = "machine", "snapshot"
# What ``making`` names things: the journal's own ids, so nothing else is ever taken for rig's.
_KIT_ID = re.compile(r"^(?P<kind>machine|snapshot)-[0-9a-f]{16}$")


def stored_records(storage: KeyValueStore, prefix: str, **fields: JsonValue) -> list[JsonObject]:
    """Every JSON object a provider keeps under ``prefix`` (``machine:``, ``snapshot:``), with
    ``fields`` added: what ``list_machines``/``list_snapshots`` answer for a provider that stores
    one record per machine or snapshot."""
    return [{**fields, **item["value"]} for item in storage.entries(prefix) if isinstance(item["value"], dict)]


class MachineController(Protocol):
    """What ``BaseRuntime`` delegates to: one controller per run, owning machine and snapshot records."""

    @property
    def provider_id(self) -> str: ...  # the provider's id, stamped on every event its runtimes emit
    @property
    def config(self) -> Mapping[str, object]: ...  # the resolved provider config from rig_config.py
    def delete_machine(self, machine_id: str) -> bool: ...  # False when it was already gone
    def list_machines(self) -> list[JsonObject]: ...  # JSON records, each with "provider" and "id"
    def list_snapshots(self) -> list[JsonObject]: ...  # artifact refs plus whatever else is known
    def delete_snapshot(self, ref: object) -> bool: ...  # False when there was nothing to remove


# Covariant, so that a machine can take any BaseRuntime[SomeController] as a BaseRuntime[MachineController].
ControllerT_co = TypeVar("ControllerT_co", bound=MachineController, covariant=True)


def config_env(provider_id: str, config: Mapping[str, object]) -> Mapping[str, object]:
    """The provider config's ``env=`` (added to every exec); a ProviderError unless it is a mapping."""
    env = config.get("env") or {}
    if not isinstance(env, Mapping):
        raise ProviderError(f"{provider_id} provider config env= must be a mapping of strings")
    return env


class BaseController:
    """A controller with ready-made defaults; subclasses set ``provider_id``, add ``runtime`` and ``delete_machine``.

    It removes and finds what its runtimes made with ``making`` (``SupportsEffects``): a machine
    through ``delete_machine``, a snapshot through ``delete_snapshot``; what it finds are the
    machines ``list_machines`` and the snapshots ``list_snapshots`` lists under a ``making`` id.
    ``rig fork NEW --from WS`` works once a subclass says what a machine was made from
    (``machine_source``) and how to snapshot it live (``snapshot_machine``).
    """

    provider_id: str
    machine_kinds: tuple[str, ...] = (MACHINE,)  # the effect kinds that are machines (docker: "container")

    def __init__(self, setup: ProviderSetup) -> None:
        self.setup = setup
        self.config: Mapping[str, object] = setup.config

    def runtime(self, context: RuntimeContext) -> object:
        raise NotImplementedError(f"{type(self).__name__} must implement runtime(context)")

    def delete_machine(self, machine_id: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must implement delete_machine(machine_id)")

    def list_machines(self) -> list[JsonObject]:
        return []

    def list_snapshots(self) -> list[JsonObject]:
        return []

    def delete_snapshot(self, ref: object) -> bool:
        """Remove a snapshot; False when there was nothing to remove (the default: no snapshots)."""
        return False

    def remove_effect(self, effect: EffectEntry) -> bool:
        """Remove a machine or snapshot the journal (or ``find_effects``) names; False when it was gone."""
        if effect["kind"] == MACHINE:
            return self.delete_machine(effect["id"])
        if effect["kind"] == SNAPSHOT:
            return self.delete_snapshot(effect["id"])
        raise ProviderError(f"{self.provider_id} cannot remove a {effect['kind']} (only machines and snapshots)")

    def machine_status(self, machine_id: str) -> LiveStatus | None:
        """How a machine made with ``making`` is now (running, stopped, missing when surely gone,
        unknown with why); None when this provider cannot tell, the default."""
        return None

    def probe(self, resources: Sequence[EffectEntry]) -> dict[str, LiveStatus]:
        """``SupportsStatus``: each machine among ``resources`` as ``machine_status`` sees it."""
        answers: dict[str, LiveStatus] = {}
        for resource in resources:
            if resource["kind"] != MACHINE:
                continue
            try:
                status = self.machine_status(resource["id"])
            except RigError as exc:
                status = LiveStatus("unknown", str(exc))
            if status is not None:
                answers[resource["id"]] = status
        return answers

    # -- rig fork --from (SupportsLiveSnapshot): override machine_source and snapshot_machine ---------
    def snapshot_source(self, effect: EffectEntry) -> JsonValue:
        """The artifact ref a machine was made from (``machine_source``); None for anything else."""
        return self.machine_source(effect["id"]) if effect["kind"] in self.machine_kinds else None

    def snapshot_resource(self, effect: EffectEntry, effects: EffectJournal) -> JsonObject:
        """Snapshot a machine as it is now (``snapshot_machine``), journaled through ``effects``."""
        if effect["kind"] not in self.machine_kinds:
            raise ProviderError(f"{self.provider_id} cannot snapshot a {effect['kind']}")
        return self.snapshot_machine(effect["id"], effects)

    def machine_source(self, machine_id: str) -> JsonObject | None:
        """The snapshot's artifact ref this machine was made from; None when unknown (the default),
        which makes ``rig fork --from`` refuse a workspace on it."""
        return None

    def snapshot_machine(self, machine_id: str, effects: EffectJournal) -> JsonObject:
        """Snapshot the machine as it is now and return its ref; journal it before making it
        (``effects.requested("snapshot", ...)``, named by the id it returns, then ``confirmed``)."""
        raise ProviderError(f"{self.provider_id} cannot snapshot a live machine")

    # -- rig fork NAME --replace (SupportsChanges): override machine_changes ------------------------
    def changes(self, effect: EffectEntry) -> list[MachineChange] | None:
        """What changed in a machine since it was made (``machine_changes``); nothing for anything else."""
        return self.machine_changes(effect["id"]) if effect["kind"] in self.machine_kinds else []

    def machine_changes(self, machine_id: str) -> list[MachineChange] | None:
        """The paths written, added or deleted in the machine since it was made; None when this
        provider cannot tell (the default), which makes ``rig fork --replace`` say so and ask."""
        return None

    def find_effects(self) -> list[EffectEntry]:
        """The listed machines and snapshots named by ``making``: rig's, journaled or not."""
        found: dict[str, EffectEntry] = {}
        for record in [*self.list_machines(), *self.list_snapshots()]:
            for key, value in record.items():
                if not isinstance(value, str) or not (key == "id" or key.endswith("_id")):
                    continue
                named = _KIT_ID.match(value)
                if named is not None:
                    found[value] = {"id": value, "kind": named["kind"], "resource": {f"{named['kind']}_id": value}}
        return list(found.values())


if TYPE_CHECKING:  # mypy checks the base against the contract (and optional hook) it implements
    _controller: type[ProviderController] = BaseController
    _effects: type[SupportsEffects] = BaseController
    _status: type[SupportsStatus] = BaseController
    _live: type[SupportsLiveSnapshot] = BaseController
    _changes: type[SupportsChanges] = BaseController


class BaseRuntime(Generic[ControllerT_co]):
    """What handlers receive: events, machine deletion and listings; subclasses add machine makers."""

    def __init__(self, controller: ControllerT_co, context: RuntimeContext) -> None:
        self.controller = controller
        self.context = context
        self.config: Mapping[str, object] = controller.config
        self.env: Mapping[str, object] = config_env(controller.provider_id, controller.config)

    def event(self, kind: str, **fields: JsonValue) -> None:
        """Emit a ``kind`` event for this node, stamped with the provider id."""
        event: EventData = {
            "type": kind,
            "node_path": self.context.node_path,
            "provider_id": self.controller.provider_id,
        }
        self.context.emit({**event, **fields})

    @contextlib.contextmanager
    def making(self, kind: str = MACHINE, **resource: JsonValue) -> Iterator[str]:
        """Journal a ``kind`` (machine, snapshot) before it is made: the block makes it under the
        id this yields, and once the block is done it is confirmed and ``<kind>.created`` emitted.

        Name the resource by that id (its directory, container name, label), so that it is found
        even if rig dies inside the block; a block that raises leaves it ``requested``, and
        ``rig rm``/``rig gc`` remove whatever part of it exists. ``resource``: more to record.
        """
        effects = self.context.effects
        made = new_effect_id(kind)
        effects.requested(kind, {**resource, f"{kind}_id": made}, effect_id=made)
        yield made
        effects.confirmed(made)
        self.event(f"{kind}.created", **{kind: made, "effect_id": made})

    def delete_machine(self, machine_id: str) -> bool:
        """Delete a machine by id; False when it was already gone (safe to retry)."""
        deleted = self.controller.delete_machine(machine_id)
        self.context.effects.deleted(machine_id)
        if deleted:
            self.event("machine.deleted", machine=machine_id)
        return deleted

    def list_machines(self) -> list[JsonObject]:
        return self.controller.list_machines()

    def list_snapshots(self) -> list[JsonObject]:
        return self.controller.list_snapshots()

    def delete_snapshot(self, ref: object) -> bool:
        return self.controller.delete_snapshot(ref)


__all__ = ["BaseController", "BaseRuntime", "MachineController", "config_env", "ref_id", "stored_records"]
