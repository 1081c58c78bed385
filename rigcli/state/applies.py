"""The apply history (``apply_runs``): every apply recorded ``running`` before its first task, then finished.

The node runs an apply starts carry its id (``workflow_node_runs.apply_id``); once it finishes,
its row lists every task in plan order (``nodes``), the cached ones with the run they reused.
A workspace's entries (its create hook, rm, an operation, stop, start) are rows with no tasks, a
``workspace`` and their own ``command``; their output is stored under the row's id (run_output.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rigcli.errors import StateError
from rigcli.jsonutil import JsonValue
from rigcli.records import ApplyRun, utc_now
from rigcli.run_ids import new_run_id
from rigcli.state.database import StateDatabase, dumps, stored_text
from rigcli.state.dialect import where_clause
from rigcli.state.process import this_host, this_owner
from rigcli.state.rows import Columns
from rigcli.state.run_output import OutputBatch, write_output
from rigcli.state.runs import id_condition
from rigcli.statuses import FINISHED_STATUSES, RunStatus


def _json_list(value: object) -> list[JsonValue]:
    return value if isinstance(value, list) else []


APPLY_RUNS = Columns(ApplyRun, "apply_runs", as_json=("nodes",), decode={"nodes": _json_list})
# Ties on the timestamp go to the later id: its time is after its 12 random digits (run_ids.py).
APPLIES_ONLY = "command IN ('apply', 'fork')"  # the rows of applies (a fork's included), not workspace entries
_NEWEST_FIRST = "ORDER BY started_at DESC, substr(id, 13) DESC, id DESC"


class ApplyHistory(StateDatabase):
    def start_apply(self, *, workflow: str, command: str, node_count: int, workspace: str | None = None) -> ApplyRun:
        """Record a ``running`` apply (or workspace entry) owned by this process, before it starts."""
        run = ApplyRun(
            id=new_run_id(),
            workflow=workflow,
            command=command,
            status="running",
            owner=this_owner(),
            pid=os.getpid(),
            host=this_host(),
            started_at=utc_now(),
            finished_at=None,
            node_count=node_count,
            cached_node_count=None,
            ran=None,
            nodes=[],
            error=None,
            workspace=workspace,
        )
        with self._write() as db:
            db.execute(APPLY_RUNS.insert(), APPLY_RUNS.params(run.to_json()))
        return run

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
    ) -> None:
        """Move a ``running`` apply to its final status, with what each of its tasks did; a workspace
        entry's last batch of output (``log``) is written in the same transaction."""
        if status not in FINISHED_STATUSES:
            raise ValueError(f"finish_apply status must be a finished one, not {status!r}")
        with self._write() as db:
            cursor = db.execute(
                "UPDATE apply_runs SET status = ?, finished_at = ?, cached_node_count = ?, ran = ?, "
                "nodes_json = ?, error = ? WHERE id = ? AND status = 'running'",
                (status, utc_now(), cached_node_count, ran, dumps(list(nodes)), stored_text(error), apply_id),
            )
            if cursor.rowcount == 0:
                raise StateError(f"Unknown or finished apply {apply_id}")
            if log:
                write_output(db, apply_id, log)

    def list_applies(
        self,
        *,
        workflow: str | None = None,
        limit: int | None = None,
        workspace: str | None = None,
        entries: bool = False,
    ) -> list[ApplyRun]:
        """Applies (of ``workflow``, or every one), newest first, at most ``limit``; ``entries``: with
        the workspaces' entries; ``workspace``: only the rows made for that workspace."""
        filters = where_clause([("workflow", workflow), ("workspace", workspace)])
        assert filters is not None
        where, params = filters
        if not entries:
            where += (" AND " if where else "WHERE ") + APPLIES_ONLY
        bound = "" if limit is None else f" LIMIT {max(0, int(limit))}"
        with self._read() as db:
            query = f"SELECT {APPLY_RUNS.select} FROM apply_runs {where} {_NEWEST_FIRST}{bound}"
            return APPLY_RUNS.all(db.execute(query, params))

    def get_apply(self, apply_id: str) -> ApplyRun | None:
        with self._read() as db:
            return APPLY_RUNS.one(db.execute(f"SELECT {APPLY_RUNS.select} FROM apply_runs WHERE id = ?", (apply_id,)))

    def find_applies(self, ref: str) -> list[ApplyRun]:
        """Applies whose id ``ref`` names (its beginning: run_ids.py), newest first."""
        condition = id_condition(ref)
        if condition is None:
            return []
        where, params = condition
        with self._read() as db:
            query = f"SELECT {APPLY_RUNS.select} FROM apply_runs WHERE {where} {_NEWEST_FIRST}"
            return APPLY_RUNS.all(db.execute(query, params))


__all__ = ["APPLIES_ONLY", "APPLY_RUNS", "ApplyHistory"]
