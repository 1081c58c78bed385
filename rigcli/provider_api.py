"""The provider plugin contract: what rig gives a provider and what a provider gives back.

A plugin is any object with ``provider_id`` and ``create_provider(setup)`` (``ProviderPlugin``).
Built-ins register through the ``rig.providers`` entry-point group exactly like third-party
plugins; a project can also pass a plugin inline with ``define_provider(..., plugin=obj)``.
``create_provider`` returns a ``ProviderController``, whose ``runtime(context)`` is what handlers
receive. A controller may also implement any of the optional hooks below (``SupportsChecks``,
``SupportsArtifactValidation``, ``SupportsEffects``, and for a workspace's life after ``fork``
``SupportsStatus``, ``SupportsPower``, ``SupportsInteractive``), and a plugin
``SupportsDiagnosis`` for ``rig doctor``. Every controller method may be a plain or an ``async``
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

import os
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol, TypedDict, TypeGuard, overload, runtime_checkable

from rigcli import masking
from rigcli.events import ProviderEventData
from rigcli.jsonutil import JsonValue
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import CheckStatus, LiveState

EventData = ProviderEventData  # what a provider emits: a mapping with a "type" and JSON fields


class StoredRecord(TypedDict):
    provider_id: str
    key: str
    value: JsonValue
    created_at: str
    updated_at: str


class KeyValueStore(Protocol):
    """Provider-owned JSON records; ``storage`` is per project, ``host_storage`` per user."""

    def get(self, key: str) -> StoredRecord | None: ...
    def set(self, key: str, value: JsonValue) -> None: ...
    def delete(self, key: str) -> bool: ...
    def entries(self, prefix: str = "") -> list[StoredRecord]: ...


class LocalHost(Protocol):
    """What the machine running rig offers handlers and providers (the user's side)."""

    @property
    def interactive(self) -> bool: ...  # a user can answer prompts and see a terminal
    def open(self, target: str) -> object: ...  # open a URL in the browser (or print it)
    def prompt(self, message: str, *, default: str | None = None, secret: bool = False) -> str: ...
    def confirm(self, message: str, *, default: bool = False) -> bool: ...
    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[False] = False,
    ) -> int: ...
    @overload
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: Literal[True],
    ) -> CapturedRun: ...
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        capture: bool = False,
    ) -> int | CapturedRun:
        """Run a command attached to the user's terminal (the live view pauses); return its exit code.

        ``capture=True``: run it off the terminal (stdin empty) and return its exit code and its
        output, decoded and masked (``CapturedRun``).
        """
        ...

    def request_capability(self, capability_id: str, params: Mapping[str, object] | None = None) -> object:
        """What the project or a plugin answers for this host capability (``define_host_capability``)."""
        ...


class CapturedRun(TypedDict):
    """What ``local.run(argv, capture=True)`` returns."""

    exit_code: int
    stdout: str  # decoded as UTF-8 (undecodable bytes replaced), secrets masked
    stderr: str


class InteractionRequest(TypedDict, total=False):
    id: str
    title: str
    url: str | None
    instructions: str | None
    completed: object  # an awaitable, a concurrent.futures.Future or a zero-argument blocking callable
    stop: Callable[[], object]


class InteractionBroker(Protocol):
    async def present(self, request: InteractionRequest) -> object: ...
    def present_blocking(self, request: InteractionRequest) -> object: ...


class Cancellation:
    """Set once when the run is interrupted; providers register callbacks to stop their work."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` on cancel (at once if already cancelled); returns a remover."""
        with self._lock:
            run_now = self._event.is_set()
            if not run_now:
                self._callbacks.append(callback)
        if run_now:
            callback()

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def decide(self) -> None:
        """The stop is decided: ``is_set()`` holds from now on, so nothing this run still finishes
        counts as a success. Cheap and lock-free (a signal handler calls it); the callbacks, which
        may be slow (killing process groups, asking a daemon), run at ``cancel()``."""
        self._event.set()

    def cancel(self) -> None:
        """Decide the stop and run the callbacks (once each, whoever calls first)."""
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


class EffectEntry(TypedDict):
    """One journaled (or found) effect as a provider sees it: its id, kind and how to find it."""

    id: str
    kind: str  # the provider's own word: machine, snapshot, container, image, ...
    resource: dict[str, JsonValue]  # what requested/confirmed recorded; ``id``/``*_id`` values name it


class EffectJournal(Protocol):
    """``setup.effects`` and ``context.effects``: the write-ahead journal of what a provider makes.

    ``requested`` before the call that makes the resource: pass the id the resource will carry
    (a directory name, a container name or label), or take the generated one and put it on the
    resource, so rig finds it even if the process dies or the reply is lost. ``confirmed`` once it
    exists, with whatever finds it from now on (an image id); ``deleted`` once it is gone (unknown
    ids are fine). ``context.effects`` also records the run or workspace the resource is made for,
    which is how ``rig gc`` knows what is still referred to; ``setup.effects`` records no owner.
    A failed journal write raises, and the resource must then not be made.
    """

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str: ...
    def confirmed(self, effect_id: str, resource: Mapping[str, JsonValue] | None = None) -> None: ...
    def deleted(self, effect_id: str) -> None: ...


class UnjournaledEffects:
    """The journal of a setup made outside rig's engine (tests, scripts): ids, and no record."""

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str:
        return effect_id or new_effect_id(kind)

    def confirmed(self, effect_id: str, resource: Mapping[str, JsonValue] | None = None) -> None:
        return None

    def deleted(self, effect_id: str) -> None:
        return None


# An effect of this kind is a command running on a machine (a container's exec session), not a
# thing: it lives as long as the rig process that journaled it. Once that process is gone (killed
# with -9, so it could not stop the command itself), the next command that loads the provider for a
# run or a workspace, and ``rig gc``, end it through ``remove_effect``; nothing else keeps it.
EXEC_EFFECT = "exec"


def new_effect_id(prefix: str) -> str:
    """A fresh effect id, ``<prefix>-<16 hex>``: safe as a directory name, container name and label."""
    return f"{prefix}-{os.urandom(8).hex()}"


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

    ``mode`` is ``"plan"`` (no side effects allowed) or ``"require"`` (a run is about to use the
    provider). A check whose ``status`` is ``"required"`` fails a run in require mode. ``"error"``
    says the provider cannot serve a run as configured right now (its daemon does not answer, an
    image it needs is missing), with ``message`` saying why: ``rig plan`` shows it, and the run
    fails where it needs the provider. Each check's ``fingerprint`` (or ``value``) and status are
    part of the provider fingerprint of every task in scope, an ``"error"`` counting as ``"ok"``:
    it is the provider's condition now, not another provider, so it never invalidates a cache.
    """

    def checks(
        self, mode: str, *, workflow: str, local: LocalHost
    ) -> Sequence[ProviderCheck] | Awaitable[Sequence[ProviderCheck]]: ...


@runtime_checkable
class SupportsArtifactValidation(Protocol):
    """Optional: is the artifact in a cached output still there? False makes the task re-run.

    Raise a ``RigError`` when the answer is unknowable (a daemon is down): the plan fails
    instead of rebuilding everything.
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


# -- a workspace's life after fork: live status, stop and start, a terminal inside (DESIGN §11) ----------


@lazy_dataclass(frozen=True)
class LiveStatus:
    """One machine as its provider sees it now: ``running``, ``stopped``, ``missing`` (confirmed gone)
    or ``unknown`` (no answer could be had), and a short ``detail`` people read (``exited (137)``,
    ``no answer from tcp://build:2376``)."""

    state: LiveState
    detail: str = ""

    def to_json(self) -> dict[str, JsonValue]:
        return {"state": self.state, "detail": self.detail}


@runtime_checkable
class SupportsStatus(Protocol):
    """Optional: what state the machines this provider made are in now (``rig ls``, ``rig op``).

    ``resources`` are journaled effects (of one workspace or of many; answer them together, in
    one request where the provider can). Answer, by effect id, for each one that is a machine:
    ``running``, ``stopped``, ``missing`` only when the provider is sure it is gone (``rig rm``
    then needs no ``--force``), ``unknown`` with the reason when it cannot tell. Leave out what is
    not a machine (a snapshot). Never raise for one resource; raising means "unknown" for all.
    Be quick: rig waits at most a couple of seconds for every provider together and shows
    ``unknown`` for what has not answered by then.
    """

    def probe(
        self, resources: Sequence[EffectEntry]
    ) -> Mapping[str, LiveStatus] | Awaitable[Mapping[str, LiveStatus]]: ...


@runtime_checkable
class SupportsPower(Protocol):
    """Optional: stop and start a machine (``rig stop``/``rig start``), keeping its files.

    ``resource`` is a machine ``probe`` answered for. Idempotent: stopping a stopped machine is
    fine. Raise ``RigError`` when it cannot be done (the machine is gone, the daemon is down).
    """

    def stop(self, resource: EffectEntry) -> Awaitable[None] | None: ...
    def start(self, resource: EffectEntry) -> Awaitable[None] | None: ...


@runtime_checkable
class SupportsInteractive(Protocol):
    """Optional: run a program inside a machine, attached to rig's own stdin, stdout and stderr
    (``rig shell``, ``rig exec``); returns its exit code, a death by signal N as 128 + N.

    ``argv`` None means the machine's login shell. ``tty``: stdin is a terminal, so the program
    gets one: rig's terminal in raw mode, its window size and every change of it, Ctrl-C and
    Ctrl-\\ reaching the program as keys (``rigcli.provider_kit.interactive``: ``RawTerminal``).
    Otherwise plain streams: stdin passed through until its end (then closed), stdout and stderr
    kept apart, bytes untouched. Called on the main thread with rig's own signal handling set
    aside: forward what the program should get (``forwarding_signals``). ``env`` is added to the
    program's environment; ``cwd`` None is the machine's own directory. Raise ``RigError`` when
    the program cannot be started (the machine is gone).
    """

    def attach(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> int | Awaitable[int]: ...


# -- day two: forks of live workspaces, idle time (rig fork --from, workspace(idle_stop=...)) ----------


@runtime_checkable
class SupportsLiveSnapshot(Protocol):
    """Optional: snapshot a workspace's machine as it is now, for ``rig fork NEW --from WS``.

    ``snapshot_source`` is the artifact ref the machine (an effect this provider journaled) was
    made from, or None when it is not a machine or was not made from a snapshot; rig replaces
    that ref in the workspace's workflow context with the new snapshot's and runs the create hook
    with it, so the new workspace is made from the live one the way the old one was made.
    ``snapshot_resource`` takes the snapshot (consistently: docker pauses the container while it
    commits) and returns its artifact ref; it journals the snapshot through ``effects`` (owned by
    the new workspace) before making it, so ``rig rm`` and ``rig gc`` remove it like any other.
    Raise ``RigError`` when it cannot.
    """

    def snapshot_source(self, effect: EffectEntry) -> JsonValue | Awaitable[JsonValue]: ...

    def snapshot_resource(
        self, effect: EffectEntry, effects: EffectJournal
    ) -> Mapping[str, JsonValue] | Awaitable[Mapping[str, JsonValue]]: ...


@runtime_checkable
class SupportsLastUse(Protocol):
    """Optional: when a machine was last used, for ``workspace(idle_stop=...)``.

    ``last_used`` gets an effect this provider journaled and answers with an ISO-8601 UTC time:
    the last sign of use the provider can see (the provider's docs say what counts), or now when
    it is in use at this moment; None when there is nothing to stop (not a machine, or stopped
    already). Raise ``RigError`` when it cannot tell (a daemon is down): the workspace is then
    marked ``reap-failed``, never stopped on a guess.
    """

    def last_used(self, effect: EffectEntry) -> str | Awaitable[str | None] | None: ...


@lazy_dataclass(frozen=True)
class ProviderDiagnosis:
    """What ``rig doctor`` shows for one provider configuration."""

    summary: str  # one line people read: where it points and whether it answers
    ok: bool  # it answered
    details: Mapping[str, JsonValue] = field(default_factory=dict)  # what ``rig doctor --json`` shows


@runtime_checkable
class SupportsDiagnosis(Protocol):
    """Optional, on the plugin: ``rig doctor``'s look at a configuration, without a controller.

    ``config`` is a provider definition's resolved config, or ``{}`` for what the provider uses
    when a project says nothing (the environment's defaults). Never raise; take a few seconds at
    most: a daemon that does not answer is a diagnosis, not an error.
    """

    def diagnose(self, config: Mapping[str, Any]) -> ProviderDiagnosis: ...


@runtime_checkable
class SupportsDirectAttach(Protocol):
    """Optional, on the plugin: ``SupportsInteractive.attach`` from a definition's resolved config
    alone, without a controller, storage or the state (``rig shell``/``rig exec`` without loading
    the project's config: ``cli/commands/lean_attach.py``).

    Return None, having started nothing, whenever the ordinary way should answer instead: the
    resource is not a machine this config reaches, the machine does not run, the daemon does not
    answer, anything unusual (that way then says what is wrong, in its own words). Once the
    program has started, behave exactly as ``attach`` does: its exit code, or ``RigError``. Import
    only what that takes, at call time: the point is a short start.
    """

    def attach_directly(
        self,
        config: Mapping[str, Any],
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
    ) -> int | None: ...


class DirectStatus(Protocol):
    """What ``SupportsDirectStatus.status_directly`` gives: one definition's answers, as its controller's."""

    def checks(self) -> Sequence[Mapping[str, Any]]:
        """The checks a plan would get from ``SupportsChecks.checks``, as far as the provider
        fingerprint reads them (``id``, ``status``, ``fingerprint``/``value``), asking nothing remote
        that could change them."""
        ...

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool | None:
        """``SupportsArtifactValidation.validate_artifact``; None where that would raise."""
        ...

    def probe(self, project_dir: str, resources: Sequence[EffectEntry]) -> Mapping[str, tuple[str, str]]:
        """``SupportsStatus.probe``, each answer as ``(state, detail)`` (raising means ``unknown`` for
        all, with why). Called on a thread of its own while ``validate_artifact`` may be asked, and
        after ``close``: a probe keeps a connection of its own."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class SupportsDirectStatus(Protocol):
    """Optional, on the plugin: a plan's provider checks and artifact validations, and live status,
    from a definition's resolved config alone (``rig ls`` without loading the project's config:
    ``cli/commands/lean_ls.py``, which uses it only while every other input of the last full
    ``rig ls``'s plans is unchanged). Return None where the controller could not be made; import
    only what that takes, at call time."""

    def status_directly(self, config: Mapping[str, Any]) -> DirectStatus | None: ...


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
    "ProviderCheck",
    "ProviderController",
    "ProviderDiagnosis",
    "ProviderPlugin",
    "ProviderSetup",
    "RuntimeContext",
    "StoredRecord",
    "SupportsArtifactValidation",
    "SupportsChecks",
    "SupportsDiagnosis",
    "SupportsDirectAttach",
    "SupportsDirectStatus",
    "SupportsEffects",
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
