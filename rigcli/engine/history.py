"""The run history: past and running applies (``rig runs``) and the stored output of node runs (``rig logs``).

Read-only: nothing here takes the writer lock, so it answers while an apply runs, also from
another clone sharing a PostgreSQL state. A run (or apply) still marked ``running`` whose rig
process on this host is gone shows as ``in-doubt``; following one ends there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from rigcli.engine.cache_admin import CacheAdmin
from rigcli.engine.history_views import AppliedRun, HistoryNode, LogSelection, LogUpdate, RunLog
from rigcli.engine.project import Project
from rigcli.engine.stores import LOCAL
from rigcli.engine.workspace_history import as_node_run
from rigcli.errors import InputError, NotFoundError
from rigcli.records import ApplyRun, NodeRun, OutputChunk
from rigcli.run_ids import id_ref, not_an_id, told_apart
from rigcli.state.api import StateStore
from rigcli.state.process import pid_alive, this_host
from rigcli.statuses import HistoryNodeStatus, ShownRunStatus

FOLLOW_SECONDS = 0.25  # how often a run in progress is read again
LOOK_BACK = 50  # applies `rig logs` looks through for the last one that ran something
AMBIGUOUS_SHOWN = 5  # the ids an ambiguous ref could mean that its error lists


def shown_status(status: str, pid: int | None, host: str | None) -> ShownRunStatus:
    """A stored run or apply status as people see it: ``in-doubt`` when its process is gone."""

    if status != "running":
        return status  # type: ignore[return-value]  # a finished RunStatus, as stored
    if not pid or (host in (None, this_host()) and not pid_alive(pid)):
        return "in-doubt"
    return "running"


def check_ref(ref: str) -> str:
    """``ref`` when it can name a run or an apply (its first characters at least); else the error."""
    if id_ref(ref) is None:
        raise InputError(not_an_id(ref))
    return ref


def ambiguous(what: str, ref: str, ids: list[str]) -> InputError:
    """The error of a ``ref`` that names several ids, each listed as briefly as tells it apart."""
    shown = told_apart(ids)
    more = f" and {len(shown) - AMBIGUOUS_SHOWN} more" if len(shown) > AMBIGUOUS_SHOWN else ""
    return InputError(f"{what} {ref} is ambiguous: {', '.join(shown[:AMBIGUOUS_SHOWN])}{more}; give more of it")


class History:
    """``rig runs`` and ``rig logs``: what applies did, and what their runs printed."""

    def __init__(self, project: Project, cache: CacheAdmin) -> None:
        self.project = project
        self.cache = cache

    # -- where runs are ------------------------------------------------------------------------------
    def _stores(self, workflow: str) -> list[tuple[str, StateStore]]:
        """(key, store) of the project store and the global fragments ``workflow`` still uses."""
        found: list[tuple[str, StateStore]] = [(LOCAL, self.project.store)]
        compiled = self.project.workflows.get(workflow)
        if compiled is not None:
            stores = self.project.stores
            stores.register_fragments(compiled.fragments)
            found += [(key, stores.get(key)) for key in compiled.fragments]
        return found

    def _log(self, key: str, run: NodeRun, workflow: str) -> RunLog:
        """``run`` (in store ``key``) with the path plans show for it."""
        path = run.node_path
        compiled = self.project.workflows.get(workflow)
        if compiled is not None:
            path = next(
                (task.path for task in compiled.tasks if task.store == key and task.cache_path == run.node_path), path
            )
        return RunLog(run, path, key, shown_status(run.status, run.pid, run.host))

    # -- applies ---------------------------------------------------------------------------------------
    def list_applies(
        self, workflow: str | None = None, limit: int | None = 20, *, entries: bool = False
    ) -> list[AppliedRun]:
        """Applies of ``workflow`` (or of every workflow), newest first; ``entries``: with the
        workspaces' entries (create, rm, op, stop, start: workspace_history.py)."""
        name = self._named(workflow) if workflow is not None else None
        found = self.project.store.list_applies(workflow=name, limit=limit, entries=entries)
        return [self.applied(record) for record in found]

    def _named(self, workflow: str | None) -> str:
        """The workflow ``workflow`` selects; with a config that does not load, the name as given
        (the state may still hold its history)."""
        if self.project.config_error is not None and workflow is not None:
            return workflow
        return self.project.select(workflow).name

    def find_apply(self, ref: str | None, workflow: str | None = None) -> AppliedRun:
        """The apply ``ref`` names (its id or its beginning), or the last one (of ``workflow``)."""
        if ref is None:
            return self.applied(self._last_apply(workflow))
        found = self.project.store.find_applies(check_ref(ref))
        if not found:
            raise NotFoundError(f"No apply {ref} in the history (rig runs lists them)")
        if len(found) > 1:
            raise ambiguous("Apply id", ref, [item.id for item in found])
        return self.applied(found[0])

    def _last_apply(self, workflow: str | None, *, ran: bool = False) -> ApplyRun:
        """The newest apply of ``workflow``; with none named, of the only workflow, or of any.
        ``ran``: the newest that ran a task (or is running), when one of the last few did."""
        only = workflow is not None or len(self.project.workflows) == 1
        name = self._named(workflow) if only else None
        found = self.project.store.list_applies(workflow=name, limit=LOOK_BACK if ran else 1)
        if not found:
            where = f" of workflow {name}" if name else ""
            raise NotFoundError(f"No apply{where} has been recorded yet: run rig apply first")
        return next((record for record in found if record.ran != 0), found[0]) if ran else found[0]

    def applied(self, record: ApplyRun) -> AppliedRun:
        """An apply with what each task did: from its node list once finished, else its runs so far."""
        status = shown_status(record.status, record.pid, record.host)
        stores = self._stores(record.workflow)
        if record.status == "running" or not record.nodes:
            logs = self._apply_logs(record, stores)
            return AppliedRun(record, status, [self._node(log, cached=False, reason=None) for log in logs])
        entries = [entry for entry in record.nodes if isinstance(entry, dict)]
        runs: dict[str, RunLog] = {}
        for key, store in stores:
            ids = [str(entry["run_id"]) for entry in entries if entry.get("run_id") and entry.get("store") == key]
            if ids:
                runs.update({run.id: self._log(key, run, record.workflow) for run in store.get_runs(ids)})
        nodes: list[HistoryNode] = []
        for entry in entries:
            run_id = entry.get("run_id")
            cached = bool(entry.get("cached"))
            reason = entry.get("reason")
            log = runs.get(str(run_id))
            if log is not None:
                nodes.append(self._node(log, cached=cached, reason=str(reason) if reason else None))
                continue
            # Never reached; or its run is in a fragment store the project no longer uses.
            ended: HistoryNodeStatus = "succeeded" if record.status == "succeeded" else "failed"
            gone: HistoryNodeStatus = "skipped" if run_id is None else "cached" if cached else ended
            nodes.append(
                HistoryNode(
                    path=str(entry.get("path")),
                    run_id=None if run_id is None else str(run_id),
                    status=gone,
                    cached=cached,
                    scope="local" if entry.get("store") == LOCAL else "global",
                    reason=str(reason) if reason else None,
                    started_at=None,
                    finished_at=None,
                    metadata={},
                    error=None,
                )
            )
        return AppliedRun(record, status, nodes)

    @staticmethod
    def _node(log: RunLog, *, cached: bool, reason: str | None) -> HistoryNode:
        run = log.run
        return HistoryNode(
            path=log.path,
            run_id=run.id,
            status="cached" if cached else log.status,
            cached=cached,
            scope="local" if log.store == LOCAL else "global",
            reason=reason,
            started_at=None if cached else run.created_at,
            finished_at=None if cached else run.finished_at,
            metadata=dict(run.metadata),
            error=None if cached else run.error,
        )

    def _apply_logs(self, record: ApplyRun, stores: list[tuple[str, StateStore]]) -> list[RunLog]:
        """The node runs an apply started, oldest first, from the project store and its fragments'."""
        logs = [
            self._log(key, run, record.workflow) for key, store in stores for run in store.list_runs(apply_id=record.id)
        ]
        return sorted(logs, key=lambda log: (log.run.created_at, log.run.id))

    # -- logs ------------------------------------------------------------------------------------------
    def select_logs(self, workflow: str | None, task: str | None, run: str | None) -> LogSelection:
        """What ``rig logs [TASK] [--run ID]`` shows: a run, a task's last run, or an apply's runs."""
        if run is not None:
            return self._by_ref(workflow, task, run)
        if task is not None:
            return LogSelection([self._last_run(workflow, task)])
        apply = self.applied(self._last_apply(workflow, ran=True))
        return LogSelection(self._apply_logs(apply.record, self._stores(apply.record.workflow)), apply)

    def select_workspace_logs(self, workspace: str, workflow: str | None, run: str | None) -> LogSelection:
        """What ``rig logs --workspace WS [--run ID]`` shows: the output of the workspace's latest
        history entry (create, rm, op, stop, start), or of the one ``run`` names."""
        name = self._named(workflow) if workflow is not None else None
        entries = [
            entry
            for entry in self.project.store.list_applies(workflow=name, workspace=workspace, entries=True)
            if entry.command not in ("apply", "fork")  # a fork's apply: its tasks' output is rig logs --run's
        ]
        if run is not None:
            check_ref(run)
            entries = [entry for entry in entries if entry.id.startswith(run.lower())]
            if len(entries) > 1:
                raise ambiguous("Run id", run, [entry.id for entry in entries])
        if not entries:
            which = f" {run}" if run is not None else ""
            raise NotFoundError(f"No entry{which} in the history of workspace {workspace} (rig runs lists them)")
        run_log = as_node_run(entries[0])
        status = shown_status(run_log.status, run_log.pid, run_log.host)
        return LogSelection([RunLog(run_log, run_log.node_path, LOCAL, status)])

    def _last_run(self, workflow: str | None, task: str) -> RunLog:
        if self.project.config_error is not None:
            return self._last_stored_run(workflow, task)
        selected = self.project.select(workflow)
        matches = self.cache.require_tasks(selected, task)
        if len(matches) > 1:
            raise InputError(f"Task {task} matches several tasks: {', '.join(item.path for item in matches)}")
        spec = matches[0]
        stores = self.project.stores
        stores.register_fragments(selected.fragments)
        column = stores.workflow_column(spec.store, selected.name)
        found = stores.get(spec.store).list_runs(workflow=column, node_path=spec.cache_path)
        if not found:
            raise NotFoundError(f"Task {spec.path} has not run yet: rig apply runs it")
        return RunLog(found[0], spec.path, spec.store, shown_status(found[0].status, found[0].pid, found[0].host))

    def _last_stored_run(self, workflow: str | None, task: str) -> RunLog:
        """``task``'s last run as the project's own state names it (its path or name), for a config
        that does not load: no task to resolve ``task`` with."""
        runs = [
            run for run in self.project.store.list_runs(workflow=workflow) if task in (run.node_path, run.node_name)
        ]
        paths = sorted({run.node_path for run in runs})
        if len(paths) > 1:
            raise InputError(f"Task {task} matches several tasks: {', '.join(paths)}")
        if not runs:
            raise NotFoundError(f"No run of {task} in this project's state (rig_config.py does not load)")
        return RunLog(runs[0], runs[0].node_path, LOCAL, shown_status(runs[0].status, runs[0].pid, runs[0].host))

    def _by_ref(self, workflow: str | None, task: str | None, ref: str) -> LogSelection:
        check_ref(ref)
        names = [self._named(workflow)] if workflow is not None else list(self.project.workflows)
        found: dict[str, RunLog] = {}
        for name in names or [""]:
            for key, store in self._stores(name):
                for run in store.find_runs(ref):
                    found.setdefault(run.id, self._log(key, run, run.workflow if key == LOCAL else name))
        applies = self.project.store.find_applies(ref)
        if len(found) + len(applies) > 1:
            raise ambiguous("Run id", ref, [*found, *(apply.id for apply in applies)])
        if found:
            log = next(iter(found.values()))
            if task is not None and task not in (log.path, log.run.node_path, log.run.node_name):
                raise InputError(f"Run {ref} is a run of {log.path}, not of {task}")
            return LogSelection([log])
        if not applies:
            raise NotFoundError(f"No run or apply {ref} in this project's state (rig runs lists them)")
        if applies[0].command not in ("apply", "fork") and task is None:
            entry = as_node_run(applies[0])  # a workspace's (or an operation's) entry: its own output
            return LogSelection(
                [RunLog(entry, entry.node_path, LOCAL, shown_status(entry.status, entry.pid, entry.host))]
            )
        apply = self.applied(applies[0])
        logs = self._apply_logs(apply.record, self._stores(apply.record.workflow))
        if task is not None:
            logs = [log for log in logs if task in (log.path, log.run.node_path, log.run.node_name)]
            if not logs:
                raise NotFoundError(f"Apply {ref} did not run {task}")
        return LogSelection(logs, apply)

    def read_logs(
        self, selection: LogSelection, *, follow: bool = False, as_bytes: bool = False
    ) -> Iterator[LogUpdate]:
        """The selection's stored output, run by run; ``follow``: keep reading runs in progress (and an
        apply's new runs) until every one is over, or the engine is interrupted. ``as_bytes``: the
        stored UTF-8 in bounded pieces, an update each, for copying out unchanged."""
        updates = self._pieces if as_bytes else self._updates
        read: dict[str, int] = {}  # run id -> last seq read
        done: set[str] = set()
        while True:
            for log in selection.runs:
                if log.run.id in done:
                    continue
                yield from updates(log, read)
                if log.finished:
                    done.add(log.run.id)
            if not follow or selection.finished or self.project.cancellation.is_set():
                return
            time.sleep(FOLLOW_SECONDS)
            selection = self._again(selection)

    def _updates(self, log: RunLog, read: dict[str, int]) -> Iterator[LogUpdate]:
        store = self._stores_by_key(log)
        after = read.get(log.run.id, -1)
        page: list[OutputChunk] = []
        skipped = False
        for chunk in store.output_chunks(log.run.id, after=after):
            if chunk.seq > after + 1 and after >= 0 and not page:
                skipped = True
            page.append(chunk)
            after = chunk.seq
            if len(page) == 64:
                yield LogUpdate(log, page, False, skipped)
                page, skipped = [], False
        read[log.run.id] = after
        yield LogUpdate(log, page, log.finished, skipped)

    def _pieces(self, log: RunLog, read: dict[str, int]) -> Iterator[LogUpdate]:
        store = self._stores_by_key(log)
        after = read.get(log.run.id, -1)
        for piece in store.output_pieces(log.run.id, after=after):
            skipped = piece.seq != after and after >= 0 and piece.seq > after + 1  # said once, at its first piece
            after = piece.seq
            yield LogUpdate(log, [], False, skipped, (piece,))
        read[log.run.id] = after
        yield LogUpdate(log, [], log.finished)

    def _stores_by_key(self, log: RunLog) -> StateStore:
        return self.project.store if log.store == LOCAL else self.project.stores.get(log.store)

    def _again(self, selection: LogSelection) -> LogSelection:
        """The selection read anew: its runs' statuses, and an apply's runs started since."""
        if selection.apply is not None:
            record = self.project.store.get_apply(selection.apply.id) or selection.apply.record
            apply = self.applied(record)
            return LogSelection(self._apply_logs(record, self._stores(record.workflow)), apply)
        logs: list[RunLog] = []
        for log in selection.runs:
            fresh = self._stores_by_key(log).get_runs([log.run.id])
            entry = None if fresh or log.run.node_kind != "workspace" else self.project.store.get_apply(log.run.id)
            run = fresh[0] if fresh else as_node_run(entry) if entry is not None else log.run
            logs.append(RunLog(run, log.path, log.store, shown_status(run.status, run.pid, run.host)))
        return LogSelection(logs)


__all__ = ["FOLLOW_SECONDS", "History", "shown_status"]
