"""A workspace's history: its create hook, rm, operations, stop and start, each a row of ``rig runs``.

An entry is an ``apply_runs`` row with no tasks, its ``command`` and ``workspace``, recorded
``running`` before the work starts and finished however it ends. What the hook or operation prints
(its ``log.output`` and command events, under ``node_path``) is kept as a task's output is: masked,
bounded, batched by the project's recorder (runlog.py), the last batch written with the finish.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from rigcli.engine.project import Project
from rigcli.errors import InterruptedRunError, RigError, describe_exception
from rigcli.records import ApplyRun, NodeRun
from rigcli.speed.coroutines import is_cancellation
from rigcli.statuses import RunStatus

T = TypeVar("T")


def entry_node_path(command: str, workspace: str | None) -> str:
    """The node path the events of an entry's hook or operation carry (``--progress plain`` and
    ``--json-stream`` show it), and so the ``node_path`` of its stored output in ``rig logs``."""
    if command.startswith("op "):
        name = command.removeprefix("op ")
        return f"op:{name}" if workspace is None else f"{workspace}/{name}"
    hook = {"create": "create", "rm": "remove", "start": "on_start"}.get(command, command)
    return f"workspace:{workspace}:{hook}"


def as_node_run(entry: ApplyRun) -> NodeRun:
    """A workspace entry as ``rig logs`` reads a run: its id keys its stored output."""
    return NodeRun(
        id=entry.id,
        workflow=entry.workflow,
        node_path=entry_node_path(entry.command, entry.workspace),
        node_name=entry.command,
        node_kind="workspace",
        node_key="",
        provider_fingerprint="",
        upstream_run_ids=[],
        output=None,
        artifacts=[],
        status=entry.status,
        invalidated=False,
        created_at=entry.started_at,
        finished_at=entry.finished_at,
        error=entry.error,
        pid=entry.pid,
        host=entry.host,
        apply_id=None,
        metadata={"command": entry.command, "workspace": entry.workspace},
    )


async def recorded(project: Project, work: Awaitable[T], *, workflow: str, workspace: str | None, command: str) -> T:
    """Await ``work`` as one history entry; its output is what the events of its node path carry.
    A history row that cannot be written never fails the work (stored output is best effort)."""
    node_path = entry_node_path(command, workspace)
    store = project.store
    try:
        entry_id: str | None = store.start_apply(
            workflow=workflow, command=command, node_count=0, workspace=workspace
        ).id
    except Exception:
        entry_id = None
    if entry_id is not None:
        project.recorder.attach(node_path, entry_id, store)
    try:
        result = await work
    except BaseException as exc:
        stopped = is_cancellation(exc) or isinstance(exc, (InterruptedRunError, KeyboardInterrupt))
        error = str(exc) if isinstance(exc, RigError) else describe_exception(exc)
        _finish(project, entry_id, node_path, "interrupted" if stopped else "failed", error or "failed")
        raise
    _finish(project, entry_id, node_path, "succeeded", None)
    return result


def _finish(project: Project, entry_id: str | None, node_path: str, status: RunStatus, error: str | None) -> None:
    if entry_id is None:
        return
    log = project.recorder.take(node_path, entry_id)
    with contextlib.suppress(Exception):
        project.store.finish_apply(entry_id, status=status, cached_node_count=0, ran=0, nodes=[], error=error, log=log)


__all__ = ["as_node_run", "entry_node_path", "recorded"]
