"""The state store contract: what the engine may ask of a project's (or a fragment's) state.

One implementation per backend (``SQLiteStateStore``, ``PostgresStateStore``), both over the same
queries (dialect.py). Reads never take the writer lock; everything that writes runs inside
``lock(...)`` held by the caller for the whole command.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.records import (
    ApplyRecord,
    ApplyRun,
    EffectRecord,
    LockHolder,
    NodeRun,
    OutputChunk,
    OutputPiece,
    WorkspaceRecord,
)
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import EffectStatus, PowerStatus, RunStatus

if TYPE_CHECKING:
    from rigcli.provider_api import KeyValueStore
    from rigcli.state.lock import Cancelled, HolderCallback
    from rigcli.state.run_output import OutputBatch
    from rigcli.state.schema_sync import SchemaSyncResult


@lazy_dataclass(frozen=True)
class StateStatus:
    """Where a state lives and what is in it, read without creating, migrating or locking anything."""

    backend: str  # "sqlite" | "postgresql"
    url: str  # the file path, or the URL with its password masked
    exists: bool  # False until the first command creates it
    schema_version: int | None
    server_version: str | None  # the SQLite library's or the PostgreSQL server's version
    lock: LockHolder | None  # who holds the writer lock now

    def to_json(self) -> JsonObject:
        lock: JsonValue = None if self.lock is None else self.lock.to_json()
        return {
            "backend": self.backend,
            "url": self.url,
            "exists": self.exists,
            "schema_version": self.schema_version,
            "server_version": self.server_version,
            "lock": lock,
        }


class StateStore(Protocol):
    """Run journal, workspaces, applies, provider storage and metadata of one state database."""

    path: str  # where it lives: a file path, or a PostgreSQL URL with its password masked
    backend: str  # "sqlite" | "postgresql"

    # -- lifecycle ------------------------------------------------------------------------------
    def sync_schema(self) -> SchemaSyncResult:
        """Create or migrate the schema; an unusable database is moved aside and the result says so.
        Then note, where they changed, the ``project.dir`` and ``config.path`` the store was made for and
        ``rig.version`` (the last writer's, in ``runtime_metadata``)."""
        ...

    def close(self) -> None: ...

    def status(self) -> StateStatus:
        """Backend, masked location, schema version and lock holder; never creates, migrates or waits."""
        ...

    def fragment_store(self, fragment_hash: str) -> StateStore | None:
        """The store of a global fragment beside this one (PostgreSQL: the fragments schema), or None
        when fragments live in their own files under ``$RIG_HOME``."""
        ...

    def lock(
        self,
        command: str,
        *,
        wait: bool = True,
        on_wait: HolderCallback | None = None,
        on_takeover: HolderCallback | None = None,
        cancelled: Cancelled | None = None,
    ) -> AbstractContextManager[LockHolder]:
        """Hold the one-writer lock; ``command`` names us to waiters (see state/lock.py).

        A wait for another holder ends with InterruptedRunError, having taken nothing, as soon as
        ``cancelled()`` returns True (it is asked a few times a second).
        """
        ...

    # -- metadata, applies, provider storage ------------------------------------------------------
    def get_metadata(self, key: str) -> JsonValue | None: ...
    def set_metadata(self, key: str, value: JsonValue) -> None: ...

    def record_apply(
        self, workflow: str, *, provider_fingerprint: str, cached_node_count: int, node_count: int
    ) -> ApplyRecord: ...

    def provider_storage(self, provider_id: str) -> KeyValueStore:
        """``setup.storage`` for a provider: its JSON records in this database."""
        ...

    # -- the run journal ----------------------------------------------------------------------------
    def start_run(
        self,
        *,
        workflow: str,
        node_path: str,
        node_name: str,
        node_kind: str,
        node_key: str,
        provider_fingerprint: str,
        upstream_run_ids: Sequence[str],
        apply_id: str | None = None,
        parts: Mapping[str, Mapping[str, str]] | None = None,
        abandon: Mapping[str, str] | None = None,
    ) -> str:
        """Record a ``running`` run owned by this process before its handler starts; return its id.

        In the same transaction, keep ``parts`` (fingerprint -> its named parts) and close the
        ``running`` runs in ``abandon`` (run id -> the evidence their rig is gone) ``abandoned``.
        """
        ...

    def abandon_runs(self, evidence: Mapping[str, str]) -> int:
        """Close these ``running`` runs ``abandoned`` with the evidence (run id -> why); return how many."""
        ...

    def fingerprint_parts(self) -> dict[str, dict[str, str]]:
        """The named parts of the fingerprints runs were recorded with (fingerprint -> parts)."""
        ...

    def finish_run(
        self,
        run_id: str,
        *,
        status: RunStatus,
        output: JsonValue | None = None,
        artifacts: Iterable[JsonValue] = (),
        error: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
        log: OutputBatch | None = None,
    ) -> None:
        """Move a ``running`` run to ``succeeded``/``failed``/``interrupted`` with its output, its
        ``step.metadata`` and the last batch of its stored output, atomically (without that batch
        when the transaction cannot take it: a run that started is always finished)."""
        ...

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        node_path: str | None = None,
        statuses: Collection[RunStatus] | None = None,
        apply_id: str | None = None,
    ) -> list[NodeRun]:
        """Runs matching every given filter, newest first."""
        ...

    def get_runs(self, run_ids: Iterable[str]) -> list[NodeRun]:
        """The runs with these ids (those that exist), newest first."""
        ...

    def find_runs(self, ref: str) -> list[NodeRun]:
        """Runs whose id is ``ref`` or ends with it (the short id people see), newest first."""
        ...

    def runs_by_path(self, workflow: str) -> dict[str, list[NodeRun]]:
        """Succeeded runs of ``workflow`` by node path, newest first: the plan's one query."""
        ...

    def invalidate_runs(self, run_ids: Iterable[str], *, cascade: bool = True) -> int:
        """Invalidate these runs (and, with ``cascade``, every run built on them); return rows changed."""
        ...

    def invalidate_paths(self, workflow: str, node_paths: Iterable[str]) -> int:
        """Invalidate every valid run of these paths, and by cascade what was built on them."""
        ...

    def delete_runs(self, workflow: str | None = None) -> int:
        """Delete the runs of ``workflow`` (every run when None), their stored output and the applies
        that made them; return how many runs."""
        ...

    # -- stored output (state/run_output.py) ----------------------------------------------------------
    def append_output(self, run_id: str, batch: OutputBatch) -> None:
        """Write a batch of a running run's output in a short transaction of its own."""
        ...

    def output_chunks(self, run_id: str, *, after: int = -1) -> Iterator[OutputChunk]:
        """The run's stored output chunks with ``seq`` above ``after``, in order."""
        ...

    def output_pieces(self, run_id: str, *, after: int = -1) -> Iterator[OutputPiece]:
        """The run's stored chunks with ``seq`` above ``after`` as UTF-8 bytes, in bounded pieces."""
        ...

    def delete_output(self, run_ids: Iterable[str]) -> int:
        """Forget these runs' stored output; return how many chunks were deleted."""
        ...

    # -- the apply history (state/applies.py) ---------------------------------------------------------
    def start_apply(self, *, workflow: str, command: str, node_count: int, workspace: str | None = None) -> ApplyRun:
        """Record a ``running`` apply (or workspace entry) owned by this process before it starts."""
        ...

    def finish_apply(
        self,
        apply_id: str,
        *,
        status: RunStatus,
        cached_node_count: int,
        ran: int,
        nodes: Sequence[JsonValue],
        error: str | None = None,
        log: OutputBatch | None = None,
    ) -> None: ...

    def list_applies(
        self,
        *,
        workflow: str | None = None,
        limit: int | None = None,
        workspace: str | None = None,
        entries: bool = False,
    ) -> list[ApplyRun]:
        """Applies (of ``workflow``, or all), newest first; ``entries``: with workspace entries too."""
        ...

    def get_apply(self, apply_id: str) -> ApplyRun | None: ...

    def find_applies(self, ref: str) -> list[ApplyRun]:
        """Applies whose id is ``ref`` or ends with it, newest first."""
        ...

    # -- workspaces ---------------------------------------------------------------------------------
    def save_workspace(self, record: WorkspaceRecord) -> WorkspaceRecord:
        """Insert or update the record named by its (workflow, name); return what is stored.

        A new record comes from ``state.workspaces.new_workspace``, a changed one from ``dataclasses.replace``.
        """
        ...

    def get_workspace(self, name: str, workflow: str) -> WorkspaceRecord | None:
        """The record, its ``resources`` read from the effects journal (what is owned by its id)."""
        ...

    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]: ...
    def delete_workspace(self, name: str, workflow: str) -> bool: ...

    def due_workspaces(self, now: str, *, failed_too: bool = False) -> list[WorkspaceRecord]:
        """Workspaces whose ``reap_at`` is at or before ``now`` (never one being created); one indexed
        query. ``failed_too`` adds every ``reap-failed`` one."""
        ...

    def adopt_replacement(self, record: WorkspaceRecord, replacement: str) -> WorkspaceRecord | None:
        """In one transaction: the workspace's effects become ``retired``, those owned by the
        ``replacement`` owner id become its own, and its row becomes ``record``. None if it is gone."""
        ...

    # -- the effects journal (state/effects.py) ----------------------------------------------------
    def request_effect(
        self,
        effect_id: str,
        *,
        provider_id: str,
        kind: str,
        resource: Mapping[str, object],
        owner_kind: str | None = None,
        owner_id: str | None = None,
    ) -> EffectRecord:
        """Record ``requested`` before the provider call that makes the resource (ids must be new)."""
        ...

    def confirm_effect(self, effect_id: str, resource: Mapping[str, object] | None = None) -> None:
        """The resource exists; ``resource`` is merged into what was recorded. A deleted one stays deleted."""
        ...

    def delete_effect(self, effect_id: str) -> bool:
        """Mark the resource gone; False when it was not journaled or already marked."""
        ...

    def note_effect_error(self, effect_id: str, error: str) -> None:
        """Why the last attempt to remove it was inconclusive."""
        ...

    def note_effect_power(self, effect_id: str, power: PowerStatus) -> bool:
        """Journal ``rig stop``/``rig start`` on a machine (``resource.power``): before the call, and its
        outcome after; False when the effect is not live."""
        ...

    def forget_effect(self, effect_id: str, reason: str) -> bool:
        """Mark it ``forgotten`` with ``reason`` (no provider can be asked); False when it was not live."""
        ...

    def get_effect(self, effect_id: str) -> EffectRecord | None: ...

    def list_effects(
        self,
        *,
        statuses: Collection[EffectStatus] | None = None,
        owner_kind: str | None = None,
        owner_id: str | None = None,
        provider_id: str | None = None,
        kind: str | None = None,
    ) -> list[EffectRecord]:
        """Effects matching every given filter, oldest first."""
        ...

    def forget_deleted_effects(self) -> int:
        """Drop the rows of resources that are gone; return how many."""
        ...


__all__ = ["StateStatus", "StateStore"]
