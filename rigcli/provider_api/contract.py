"""The plugin and controller contract: setup, runtime context, checks, artifacts, effects."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol, TypedDict, TypeGuard, runtime_checkable

from rigcli import masking
from rigcli.events import ProviderEventData
from rigcli.jsonutil import JsonValue
from rigcli.provider_api.effects import EffectEntry, EffectJournal, UnjournaledEffects
from rigcli.provider_api.host import Cancellation, InteractionBroker, KeyValueStore, LocalHost
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import CheckStatus

EventData = ProviderEventData  # what a provider emits: a mapping with a "type" and JSON fields


@lazy_dataclass(frozen=True)
class ProviderSetup:
    """Handed to ``create_provider``: resolved config plus rig-owned storage and host access."""

    provider_id: str
    config: Mapping[str, Any]
    storage: KeyValueStore
    host_storage: KeyValueStore
    local: LocalHost
    project_dir: str
    state_dir: str
    cancellation: Cancellation = field(default_factory=Cancellation)
    effects: EffectJournal = field(default_factory=UnjournaledEffects)  # no owner: see RuntimeContext
    # The names of the project's workflows that use this definition (what a provider may name its
    # shared resources after, since nothing of the clone's path is shared).
    workflows: tuple[str, ...] = ()

    def mark_secret(self, value: str) -> None:
        """Mask ``value`` as ``***`` in every event, log line, error, JSON document and stored row."""
        masking.register(value)

    def request_capability(self, capability_id: str, params: Mapping[str, object] | None = None) -> object:
        """Ask the host for a capability a project or plugin defined (``define_host_capability``);
        an unknown id is an error (``Host capability "X" is not registered``)."""
        return self.local.request_capability(capability_id, params)


@lazy_dataclass(frozen=True)
class RuntimeContext:
    """Handed to ``controller.runtime``: who is calling, and how to report back."""

    provider_name: str
    node_path: str
    workflow: str
    emit: Callable[[EventData], None]  # events for this node: {"type": "vm.created", ...}
    interaction: InteractionBroker
    local: LocalHost
    cancellation: Cancellation
    workspace: str | None = None
    effects: EffectJournal = field(default_factory=UnjournaledEffects)  # owned by this run or workspace
    # The cache key of the task running (``sha256-<hex>``): the same in every clone for the same
    # task; None for a hook or an operation.
    cache_key: str | None = None

    def mark_secret(self, value: str) -> None:
        """Mask ``value`` as ``***`` in every event, log line, error, JSON document and stored row."""
        masking.register(value)

    def request_capability(self, capability_id: str, params: Mapping[str, object] | None = None) -> object:
        """Ask the host for a capability a project or plugin defined (``define_host_capability``);
        an unknown id is an error (``Host capability "X" is not registered``)."""
        return self.local.request_capability(capability_id, params)


class ProviderCheck(TypedDict, total=False):
    id: str
    label: str
    status: CheckStatus  # "required" fails a run in require mode; "error": unusable now (see SupportsChecks)
    value: JsonValue
    message: str
    detail: str
    fingerprint: str


@runtime_checkable
class ProviderController(Protocol):
    """What ``create_provider`` returns: one per provider definition and command."""

    provider_id: str

    def runtime(self, context: RuntimeContext) -> object | Awaitable[object]:
        """What handlers receive under the provider's scope name (``box`` in ``def f(step, box)``)."""
        ...


@runtime_checkable
class ProviderPlugin(Protocol):
    """A provider: found by ``provider_id`` in the ``rig.providers`` entry points, or passed inline."""

    provider_id: str

    def create_provider(self, setup: ProviderSetup) -> ProviderController | Awaitable[ProviderController]: ...


@runtime_checkable
class SupportsChecks(Protocol):
    """Optional: plan-time status such as "login required".

    ``mode`` is ``"plan"`` (no side effects allowed), ``"offline"`` (no side effects, and ask
    nothing remote: answer from the config and what the provider keeps; ``rig ls --no-probe``) or
    ``"require"`` (a run is about to use the provider). A check whose ``status`` is ``"required"``
    fails a run in require mode. ``"error"`` says the provider cannot serve a run as configured
    right now (its daemon does not answer, an image it needs is missing), with ``message`` saying
    why: ``rig plan`` shows it, and the run fails where it needs the provider. Each check's
    ``fingerprint`` (or ``value``) and status are part of the provider fingerprint of every task in
    scope, an ``"error"`` counting as ``"ok"``: it is the provider's condition now, not another
    provider, so it never invalidates a cache.
    """

    def checks(
        self, mode: str, *, workflow: str, local: LocalHost
    ) -> Sequence[ProviderCheck] | Awaitable[Sequence[ProviderCheck]]: ...


@runtime_checkable
class SupportsArtifactValidation(Protocol):
    """Optional: is the artifact in a cached output still there? False makes the task re-run.

    Raise a ``RigError`` when the answer is unknowable (a daemon is down): the plan fails
    instead of rebuilding everything. Raise ``UnconfirmedArtifactError`` instead when where the
    artifact is kept cannot be asked now but nothing says it is gone (a registry out of reach): the
    run stays cached and the command warns with its message.
    """

    def validate_artifact(self, ref: Mapping[str, JsonValue]) -> bool | Awaitable[bool]: ...


@runtime_checkable
class SupportsEffects(Protocol):
    """Optional: remove what the effects journal says this provider made, and find what it made.

    ``remove_effect`` gets an effect this provider journaled (or found): remove the resource and
    everything half-made under its id (temp copies). True when something was removed, False when
    it was already gone (that counts as removed). Raise ``RigError`` when the answer is unknowable
    (a daemon is down): the effect stays journaled and ``rig rm``/``rig gc`` say why. Idempotent.

    ``find_effects`` lists what this provider can see that rig made for this project (its
    directory names, its labels), journaled or not; ``rig gc`` collects the unreferenced ones.
    Never report anything rig did not make. Raise ``RigError`` when it cannot look.
    """

    def remove_effect(self, effect: EffectEntry) -> bool | Awaitable[bool]: ...
    def find_effects(self) -> Sequence[EffectEntry] | Awaitable[Sequence[EffectEntry]]: ...


@runtime_checkable
class SupportsIdentity(Protocol):
    """Optional, on the plugin: which part of a definition's resolved config says what its machines and
    snapshots are, for the provider fingerprint (by default, all of it). A provider whose snapshots
    any host can reach (through a registry) leaves out where its machines run, so that shared
    state is cached wherever the project is applied. Pure: no I/O, the same answer every time."""

    def identity_config(self, config: Mapping[str, Any]) -> Mapping[str, Any]: ...


def is_artifact_ref(value: object) -> TypeGuard[Mapping[str, JsonValue]]:
    """Any dict with string ``provider`` and ``kind`` keys is an artifact ref."""
    return isinstance(value, Mapping) and isinstance(value.get("provider"), str) and isinstance(value.get("kind"), str)


def find_artifacts(value: object) -> list[Mapping[str, JsonValue]]:
    """Every artifact ref nested anywhere in ``value``, outermost first."""
    found: list[Mapping[str, JsonValue]] = []
    if isinstance(value, Mapping):
        if is_artifact_ref(value):
            found.append(value)
        for item in value.values():
            found.extend(find_artifacts(item))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(find_artifacts(item))
    return found
