"""Optional hooks for a workspace's life after fork: live status, power, a terminal, live snapshots, idle time."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol, runtime_checkable

from rigcli.jsonutil import JsonValue
from rigcli.provider_api.effects import EffectEntry, EffectJournal
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import ChangeKind, LiveState

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
class MachineChange:
    """One path a machine's files changed at since it was made: ``added``, ``changed`` or ``deleted``."""

    kind: ChangeKind
    path: str

    def to_json(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "path": self.path}


@runtime_checkable
class SupportsChanges(Protocol):
    """Optional: what changed in a machine since it was made, so that ``rig fork NAME --replace`` can say
    what it would throw away before it does.

    ``changes`` gets an effect this provider journaled and answers with the paths written, added or
    deleted in it since it was made (relative to the machine's own directory, or absolute inside a
    container), an empty list when nothing changed or it is not a machine (a snapshot), and None
    when the provider cannot tell for this one. Raise ``RigError`` when it cannot be asked (a daemon
    is down): rig then says it cannot tell what would be lost, and asks all the same.
    """

    def changes(
        self, effect: EffectEntry
    ) -> Sequence[MachineChange] | Awaitable[Sequence[MachineChange] | None] | None: ...


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
