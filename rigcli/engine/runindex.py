"""What one command knows of the run journal: each store's runs, read once and shared by its passes.

The plan's hot path reads the succeeded runs of the workflow (one SELECT per store). Everything
else — runs that did not succeed, the parts of old fingerprints, who holds a store's lock — is
read only when a task is pending and rig has to say why.
"""

from __future__ import annotations

from rigcli.engine.stores import Stores
from rigcli.graph import TaskSpec
from rigcli.records import Liveness, LockHolder, NodeRun
from rigcli.state.process import is_ours, judge_liveness
from rigcli.statuses import RunStatus

# Runs that left no result: the newest of them may say why a node is pending (cachekeys.judge_attempt).
ATTEMPT_STATUSES: tuple[RunStatus, ...] = ("running", "failed", "interrupted", "abandoned")


class RunIndex:
    """Runs by store and path, read once per command (``runs_by_path``) and shared."""

    def __init__(self, stores: Stores, workflow: str) -> None:
        self._stores = stores
        self._workflow = workflow
        self._runs: dict[str, dict[str, list[NodeRun]]] = {}
        self._attempts: dict[str, dict[str, list[NodeRun]]] = {}
        self._parts: dict[str, dict[str, dict[str, str]]] = {}
        self._holders: dict[str, LockHolder | None] = {}

    def candidates(self, task: TaskSpec) -> list[NodeRun]:
        """The task's succeeded runs (invalidated ones too), newest first."""
        if task.store not in self._runs:
            store = self._stores.get(task.store)
            self._runs[task.store] = store.runs_by_path(self._stores.workflow_column(task.store, self._workflow))
        return self._runs[task.store].get(task.cache_path, [])

    def attempts(self, task: TaskSpec) -> list[NodeRun]:
        """The task's runs that left no result (failed, interrupted, abandoned, or running in
        another process), newest first."""
        return self._attempts_of(task.store).get(task.cache_path, [])

    def running(self, task: TaskSpec) -> list[NodeRun]:
        """The task's runs by other processes still marked ``running``, newest first."""
        return [run for run in self.attempts(task) if run.status == "running"]

    def all_running(self, key: str) -> list[NodeRun]:
        """Every run of the workflow in store ``key`` that another process left ``running``."""
        if key in self._attempts:
            return [run for runs in self._attempts[key].values() for run in runs if run.status == "running"]

        column = self._stores.workflow_column(key, self._workflow)
        return [
            run for run in self._stores.get(key).list_runs(workflow=column, statuses=["running"]) if not is_ours(run)
        ]

    def _attempts_of(self, key: str) -> dict[str, list[NodeRun]]:
        if key not in self._attempts:
            column = self._stores.workflow_column(key, self._workflow)
            by_path: dict[str, list[NodeRun]] = {}
            for run in self._stores.get(key).list_runs(workflow=column, statuses=ATTEMPT_STATUSES):
                if run.status != "running" or not is_ours(run):  # what this process runs now says nothing
                    by_path.setdefault(run.node_path, []).append(run)
            self._attempts[key] = by_path
        return self._attempts[key]

    def liveness(self, key: str, run: NodeRun) -> Liveness:
        """Whether the rig that left ``run`` running (in store ``key``) is still running it."""

        if key not in self._holders:
            self._holders[key] = self._stores.get(key).status().lock
        return judge_liveness(run, self._holders[key])

    def parts(self, key: str, fingerprint: str) -> dict[str, str] | None:
        """The named parts ``fingerprint`` was stored with in store ``key`` (None: not stored)."""
        if key not in self._parts:
            self._parts[key] = self._stores.get(key).fingerprint_parts()
        return self._parts[key].get(fingerprint)

    def forget(self) -> None:
        """Read again on next use: runs were invalidated."""
        self._runs.clear()
        self._attempts.clear()
        self._holders.clear()


__all__ = ["ATTEMPT_STATUSES", "RunIndex"]
