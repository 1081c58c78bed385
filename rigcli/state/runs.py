"""The run journal: node runs recorded before their handler starts, finished in one transaction."""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping, Sequence

from rigcli.errors import StateError, TaskError
from rigcli.jsonutil import JsonValue, find_non_json
from rigcli.records import FingerprintParts, NodeRun, utc_now
from rigcli.run_ids import LEGACY_LENGTH, id_ref, new_run_id
from rigcli.state.database import StateDatabase, dumps, stored_text
from rigcli.state.dialect import Connection, placeholders, where_clause
from rigcli.state.process import this_host
from rigcli.state.rows import Columns, json_object
from rigcli.state.run_output import OutputBatch, RunOutput, write_output
from rigcli.statuses import FINISHED_STATUSES, RUN_STATUSES, RunStatus

# What a run's own process may finish it as; ``abandoned`` is written by another rig (abandon_runs).
OUTCOME_STATUSES: frozenset[RunStatus] = frozenset({"succeeded", "failed", "interrupted"})

# Every column of the run journal, by field of NodeRun (rows.py); the plan reads thousands at once.
RUNS = Columns(
    NodeRun,
    "workflow_node_runs",
    as_json=("upstream_run_ids", "output", "artifacts", "metadata"),
    decode={"invalidated": bool, "metadata": json_object},  # SQLite stores booleans as 0/1
)
PARTS = Columns(FingerprintParts, "fingerprint_parts", as_json=("parts",), decode={"parts": json_object})
# Newest first; the id makes the order of runs recorded within the same microsecond the same on
# every read (PostgreSQL has no rowid to do it).
# Ties on the timestamp go to the later id: its time is after its 12 random digits (run_ids.py).
_NEWEST_FIRST = "ORDER BY created_at DESC, substr(id, 13) DESC, id DESC"
_CHUNK = 500  # stays below SQLite's bound-parameter limit on old builds (999)


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def id_condition(ref: str) -> tuple[str, tuple[str, str]] | None:
    """The ``WHERE`` condition (and its parameters) of the ids ``ref`` names: its beginning, or an
    older rig's id's end (run_ids.py); None when ``ref`` cannot name one."""
    text = id_ref(ref)
    if text is None:
        return None
    return f"(id LIKE ? OR (LENGTH(id) = {LEGACY_LENGTH} AND id LIKE ?))", (f"{text}%", f"%{text}")


def _invalidate(db: Connection, seeds: Iterable[str], *, cascade: bool) -> int:
    targets = set(seeds)
    if cascade and targets:
        dependants: dict[str, list[str]] = {}
        query = "SELECT id, upstream_run_ids_json FROM workflow_node_runs WHERE upstream_run_ids_json != '[]'"
        for run_id, upstream_json in db.execute(query):
            for upstream in json.loads(upstream_json):
                dependants.setdefault(upstream, []).append(run_id)
        # Walk through already-invalidated runs too: what was built on them is stale as well.
        frontier = list(targets)
        while frontier:
            for child in dependants.get(frontier.pop(), ()):
                if child not in targets:
                    targets.add(child)
                    frontier.append(child)
    changed = 0
    for chunk in _chunks(sorted(targets)):
        cursor = db.execute(
            f"UPDATE workflow_node_runs SET invalidated = TRUE WHERE invalidated = FALSE "
            f"AND id IN ({placeholders(len(chunk))})",
            chunk,
        )
        changed += cursor.rowcount
    return changed


class _NotRunning(StateError):
    """finish_run of a run that is not (any longer) ``running``."""


def _abandon(db: Connection, run_id: str, evidence: str, at: str | None = None) -> int:
    cursor = db.execute(
        "UPDATE workflow_node_runs SET status = 'abandoned', error = ?, finished_at = ? "
        "WHERE id = ? AND status = 'running'",
        (stored_text(evidence), at or utc_now(), run_id),
    )
    return int(cursor.rowcount)


class RunJournal(RunOutput, StateDatabase):
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
        """Record a ``running`` run owned by this process; call before the handler starts.

        In the same transaction: ``parts`` (by fingerprint: the node key's and the provider
        fingerprint's named parts) are kept unless already known, and the ``running`` runs in
        ``abandon`` (run id -> the evidence that their rig is gone) are closed ``abandoned``,
        superseded by this one.
        """
        run = NodeRun(
            id=new_run_id(),
            workflow=workflow,
            node_path=node_path,
            node_name=node_name,
            node_kind=node_kind,
            node_key=node_key,
            provider_fingerprint=provider_fingerprint,
            upstream_run_ids=list(upstream_run_ids),
            output=None,
            artifacts=[],
            status="running",
            invalidated=False,
            created_at=utc_now(),
            finished_at=None,
            error=None,
            pid=os.getpid(),
            host=this_host(),
            apply_id=apply_id,
            metadata={},
        )
        self._require_room()
        with self._write() as db:
            db.execute(RUNS.insert(), RUNS.params(run.to_json()))
            for fingerprint, named in (parts or {}).items():
                row = FingerprintParts(fingerprint, dict(named), run.created_at)
                db.execute(f"{PARTS.insert()} ON CONFLICT (fingerprint) DO NOTHING", PARTS.params(row.to_json()))
            for old_id, evidence in sorted((abandon or {}).items()):
                _abandon(db, old_id, f"{evidence}; superseded by run {run.id}", run.created_at)
        return run.id

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
        """Move a ``running`` run to its final status together with its output, its metadata and the
        last batch of its stored output (``log``), in one transaction.

        Should that transaction fail (a full disk), the run is still finished, without ``log``:
        a run that started is always finished.
        """
        if status not in OUTCOME_STATUSES:
            msg = f"finish_run status must be one of {', '.join(sorted(OUTCOME_STATUSES))}, not {status!r}"
            raise ValueError(msg)
        artifact_list = list(artifacts)
        bad = find_non_json({"output": output, "artifacts": artifact_list})
        if bad is not None:
            msg = f"Output of run {run_id} must be JSON-serializable (at {bad})"
            raise TaskError(msg)
        values = (
            status,
            None if output is None else dumps(output),
            dumps(artifact_list),
            stored_text(error),
            utc_now(),
            dumps(dict(metadata or {})),
            run_id,
        )
        if log:
            try:
                self._finish(run_id, values, log)
                return
            except _NotRunning:
                raise
            except Exception:  # a full disk, say: the run is finished all the same, without that output
                pass
        self._finish(run_id, values, None)

    def _finish(self, run_id: str, values: tuple[object, ...], log: OutputBatch | None) -> None:
        with self._write() as db:
            cursor = db.execute(
                "UPDATE workflow_node_runs SET status = ?, output_json = ?, artifacts_json = ?, "
                "error = ?, finished_at = ?, metadata_json = ? WHERE id = ? AND status = 'running'",
                values,
            )
            if cursor.rowcount == 0:
                row = db.execute("SELECT status FROM workflow_node_runs WHERE id = ?", (run_id,)).fetchone()
                msg = f"Unknown run {run_id}" if row is None else f"Run {run_id} is already {row[0]}"
                raise _NotRunning(msg)
            if log:
                write_output(db, run_id, log)

    def abandon_runs(self, evidence: Mapping[str, str]) -> int:
        """Close these ``running`` runs (run id -> why their rig is known to be gone) ``abandoned``;
        return how many were still running."""
        with self._write() as db:
            return sum(_abandon(db, run_id, why) for run_id, why in sorted(evidence.items()))

    def fingerprint_parts(self) -> dict[str, dict[str, str]]:
        """The named parts of every fingerprint runs were recorded with (fingerprint -> parts)."""
        with self._read() as db:
            return {
                row.fingerprint: row.parts
                for row in PARTS.all(db.execute(f"SELECT {PARTS.select} FROM fingerprint_parts"))
            }

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        node_path: str | None = None,
        statuses: Collection[RunStatus] | None = None,
        apply_id: str | None = None,
    ) -> list[NodeRun]:
        """Runs matching every given filter, newest first."""
        filters = where_clause(
            [("workflow", workflow), ("node_path", node_path), ("apply_id", apply_id)], statuses=statuses
        )
        if filters is None:
            return []
        where, params = filters
        with self._read() as db:
            return RUNS.all(db.execute(f"SELECT {RUNS.select} FROM workflow_node_runs {where} {_NEWEST_FIRST}", params))

    def get_runs(self, run_ids: Iterable[str]) -> list[NodeRun]:
        """The runs with these ids (those that exist), newest first."""
        ids = sorted(set(run_ids))
        found: list[NodeRun] = []
        with self._read() as db:
            for chunk in _chunks(ids):
                query = f"SELECT {RUNS.select} FROM workflow_node_runs WHERE id IN ({placeholders(len(chunk))})"
                found.extend(RUNS.all(db.execute(query, chunk)))
        return sorted(found, key=lambda run: (run.created_at, run.id), reverse=True)

    def find_runs(self, ref: str) -> list[NodeRun]:
        """Runs whose id ``ref`` names (its beginning: run_ids.py), newest first."""
        condition = id_condition(ref)
        if condition is None:
            return []
        where, params = condition
        with self._read() as db:
            query = f"SELECT {RUNS.select} FROM workflow_node_runs WHERE {where} {_NEWEST_FIRST}"
            return RUNS.all(db.execute(query, params))

    def runs_by_path(self, workflow: str) -> dict[str, list[NodeRun]]:
        """Succeeded runs of ``workflow`` (invalidated ones included) by node path, newest first.

        The plan's hot path: one SELECT for the whole workflow, however many nodes it has.
        """
        by_path: dict[str, list[NodeRun]] = {}
        with self._read() as db:
            rows = db.execute(
                f"SELECT {RUNS.select} FROM workflow_node_runs WHERE workflow = ? AND status = 'succeeded' "
                f"ORDER BY node_path, created_at DESC, substr(id, 13) DESC, id DESC",
                (workflow,),
            )
            read = RUNS.reader(rows)
            for row in rows:
                run = read(row)
                by_path.setdefault(run.node_path, []).append(run)
        return by_path

    def invalidate_runs(self, run_ids: Iterable[str], *, cascade: bool = True) -> int:
        """Invalidate these runs and (with ``cascade``) every run built on them; return rows changed."""
        with self._write() as db:
            return _invalidate(db, run_ids, cascade=cascade)

    def invalidate_paths(self, workflow: str, node_paths: Iterable[str]) -> int:
        """Invalidate every valid run of these paths (and, by cascade, what was built on them).

        All of them, not only the newest: the newest *matching* run is reused, so an older run left
        valid would come back as the cache entry.
        """
        paths = sorted(set(node_paths))
        with self._write() as db:
            seeds: list[str] = []
            for chunk in _chunks(paths):
                seeds.extend(
                    row[0]
                    for row in db.execute(
                        f"SELECT id FROM workflow_node_runs WHERE workflow = ? AND invalidated = FALSE "
                        f"AND node_path IN ({placeholders(len(chunk))})",
                        (workflow, *chunk),
                    )
                )
            return _invalidate(db, seeds, cascade=True)

    def delete_runs(self, workflow: str | None = None) -> int:
        """Delete the runs of ``workflow`` (every run when None) with their stored output and the
        applies that made them; return how many runs were deleted. The workspaces' history entries
        (``apply_runs`` rows that are not applies) and their output are no cache: they stay."""
        with self._write() as db:
            if workflow is None:
                db.execute(
                    "DELETE FROM node_run_output WHERE run_id NOT IN "
                    "(SELECT id FROM apply_runs WHERE command NOT IN ('apply', 'fork'))"
                )
                db.execute("DELETE FROM apply_runs WHERE command IN ('apply', 'fork')")
                deleted = db.execute("DELETE FROM workflow_node_runs").rowcount
            else:
                db.execute(
                    "DELETE FROM node_run_output WHERE run_id IN "
                    "(SELECT id FROM workflow_node_runs WHERE workflow = ?)",
                    (workflow,),
                )
                db.execute("DELETE FROM apply_runs WHERE workflow = ? AND command IN ('apply', 'fork')", (workflow,))
                deleted = db.execute("DELETE FROM workflow_node_runs WHERE workflow = ?", (workflow,)).rowcount
            # Parts go with the last run that used them.
            db.execute(
                "DELETE FROM fingerprint_parts WHERE fingerprint NOT IN (SELECT node_key FROM workflow_node_runs) "
                "AND fingerprint NOT IN (SELECT provider_fingerprint FROM workflow_node_runs)"
            )
            return deleted


__all__ = [
    "FINISHED_STATUSES",
    "OUTCOME_STATUSES",
    "PARTS",
    "RUNS",
    "RUN_STATUSES",
    "RunJournal",
    "id_condition",
]
