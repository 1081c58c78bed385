"""The provider plugin contract: what rig gives a provider and what a provider gives back.

A plugin is any object with ``provider_id`` and ``create_provider(setup)`` (``ProviderPlugin``).
Built-ins register through the ``rig.providers`` entry-point group exactly like third-party
plugins; a project can also pass a plugin inline with ``define_provider(..., plugin=obj)``.
``create_provider`` returns a ``ProviderController``, whose ``runtime(context)`` is what handlers
receive. A controller may also implement any of the optional hooks below (``SupportsChecks``,
``SupportsArtifactValidation``, ``SupportsEffects``, and for a workspace's life after ``fork``
``SupportsStatus``, ``SupportsPower``, ``SupportsInteractive``, ``SupportsChanges``), and a plugin
``SupportsDiagnosis`` for ``rig doctor`` and ``SupportsIdentity`` for what of its config the
provider fingerprint covers. Every controller method may be a plain or an ``async``
function. Annotate a plugin object as ``ProviderPlugin`` and mypy
checks it.

Effects: a provider that makes machines, containers, images or snapshots journals each one
through ``EffectJournal`` *before* the call that makes it (``effects.requested``), under an id the
resource itself carries (its directory name, a ``rig.effect`` label), then ``confirmed`` and, when
it removes it, ``deleted``. With ``SupportsEffects`` rig can then remove exactly what a killed
``fork`` left behind (``rig rm``) and collect what nothing refers to (``rig gc``). The journal is
the one record of what was made: a workspace's ``resources`` are the effects owned by it. A
provider built on ``rigcli.provider_kit`` gets all of this from ``BaseRuntime.making`` and
``BaseController``.

Secrets: a ``secret(...)`` value in the config is masked as ``***`` everywhere rig shows or
stores anything. A value the provider learns itself (a token from a login, a generated
password) is masked the same way once the provider calls ``setup.mark_secret(value)`` or
``context.mark_secret(value)``.
"""

from __future__ import annotations

from rigcli.provider_api.contract import (
    EventData,
    ProviderCheck,
    ProviderController,
    ProviderPlugin,
    ProviderSetup,
    RuntimeContext,
    SupportsArtifactValidation,
    SupportsChecks,
    SupportsEffects,
    SupportsIdentity,
    find_artifacts,
    is_artifact_ref,
)
from rigcli.provider_api.day_two import (
    LiveStatus,
    MachineChange,
    ProviderDiagnosis,
    SupportsChanges,
    SupportsDiagnosis,
    SupportsInteractive,
    SupportsLastUse,
    SupportsLiveSnapshot,
    SupportsPower,
    SupportsStatus,
)
from rigcli.provider_api.direct import DirectStatus, SupportsDirectAttach, SupportsDirectConnect, SupportsDirectStatus
from rigcli.provider_api.effects import EXEC_EFFECT, EffectEntry, EffectJournal, UnjournaledEffects, new_effect_id
from rigcli.provider_api.host import (
    Cancellation,
    CapturedRun,
    InteractionBroker,
    InteractionRequest,
    KeyValueStore,
    LocalHost,
    StoredRecord,
)

__all__ = [
    "EXEC_EFFECT",
    "Cancellation",
    "CapturedRun",
    "DirectStatus",
    "EffectEntry",
    "EffectJournal",
    "EventData",
    "InteractionBroker",
    "InteractionRequest",
    "KeyValueStore",
    "LiveStatus",
    "LocalHost",
    "MachineChange",
    "ProviderCheck",
    "ProviderController",
    "ProviderDiagnosis",
    "ProviderPlugin",
    "ProviderSetup",
    "RuntimeContext",
    "StoredRecord",
    "SupportsArtifactValidation",
    "SupportsChanges",
    "SupportsChecks",
    "SupportsDiagnosis",
    "SupportsDirectAttach",
    "SupportsDirectConnect",
    "SupportsDirectStatus",
    "SupportsEffects",
    "SupportsIdentity",
    "SupportsInteractive",
    "SupportsLastUse",
    "SupportsLiveSnapshot",
    "SupportsPower",
    "SupportsStatus",
    "UnjournaledEffects",
    "find_artifacts",
    "is_artifact_ref",
    "new_effect_id",
]
