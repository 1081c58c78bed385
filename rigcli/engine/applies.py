"""Record each apply in the history (``apply_runs``): ``running`` before its first task, then finished
with what every task did — reused (``cached``), ran, failed, or never reached (``skipped``)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from rigcli.engine.evaluate import Evaluation
from rigcli.errors import InterruptedRunError, RigError, describe_exception
from rigcli.graph import CompiledWorkflow
from rigcli.jsonutil import JsonValue
from rigcli.records import ApplyRun
from rigcli.speed.coroutines import is_cancellation
from rigcli.state.api import StateStore
from rigcli.statuses import RunStatus


class ApplyJournal:
    """One apply's row in the history, written by the apply itself."""

    def __init__(self, store: StateStore, workflow: CompiledWorkflow, record: ApplyRun) -> None:
        self.store = store
        self.workflow = workflow
        self.record = record

    @classmethod
    def start(
        cls, store: StateStore, workflow: CompiledWorkflow, command: str, workspace: str | None = None
    ) -> ApplyJournal:
        record = store.start_apply(
            workflow=workflow.name, command=command, node_count=len(workflow.tasks), workspace=workspace
        )
        return cls(store, workflow, record)

    @property
    def id(self) -> str:
        return self.record.id

    def succeeded(self, passes: Sequence[Evaluation]) -> None:
        self._finish("succeeded", passes, None)

    def failed(self, passes: Sequence[Evaluation], exc: BaseException) -> None:
        """The apply ended with ``exc``: ``interrupted`` or ``failed``. Never raises: ``exc`` is what
        the user must hear about, not a history row that could not be written."""
        stopped = is_cancellation(exc) or isinstance(exc, (InterruptedRunError, KeyboardInterrupt))
        status: RunStatus = "interrupted" if stopped else "failed"
        error = str(exc) if isinstance(exc, RigError) else describe_exception(exc)
        with contextlib.suppress(Exception):
            self._finish(status, passes, error or status)

    def _finish(self, status: RunStatus, passes: Sequence[Evaluation], error: str | None) -> None:
        started = {run_id for evaluation in passes for run_id in evaluation.started.values()}
        last = passes[-1] if passes else None
        nodes: list[JsonValue] = []
        cached = 0
        for task in self.workflow.tasks:
            node = last.nodes.get(task.index) if last is not None else None
            run_id = None if last is None else last.used_runs.get(task.index) or last.started.get(task.index)
            entry: dict[str, JsonValue] = {
                "path": task.path,
                "run_id": run_id,
                "cached": run_id is not None and run_id not in started,
                "store": task.store,  # where its run is: LOCAL or a global fragment's hash
            }
            if entry["cached"]:
                cached += 1
            elif node is not None:
                entry["reason"] = node.reason.code  # why it ran (or would have)
            nodes.append(entry)
        self.store.finish_apply(
            self.id, status=status, cached_node_count=cached, ran=len(started), nodes=nodes, error=error
        )


__all__ = ["ApplyJournal"]
