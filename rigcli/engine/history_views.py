"""What the run history answers: applies with what each task did, and node runs with their stored output.

Built on the records (``ApplyRun``, ``NodeRun``, ``OutputChunk``) by ``engine/history.py``; the CLI
shows them (``rig runs``, ``rig logs``) and ``to_json`` gives their documented ``--json`` shapes.
"""

from __future__ import annotations

from rigcli.jsonutil import JsonValue
from rigcli.records import ApplyRun, NodeRun, OutputChunk, OutputPiece, parse_timestamp
from rigcli.run_ids import short_run_id
from rigcli.speed.records import lazy_dataclass
from rigcli.statuses import HistoryNodeStatus, ShownRunStatus


def seconds_between(started: str | None, finished: str | None) -> float | None:
    if not started or not finished:
        return None
    return round((parse_timestamp(finished) - parse_timestamp(started)).total_seconds(), 6)


@lazy_dataclass(frozen=True)
class HistoryNode:
    """One task of one apply: the run it ran (or reused), and how that went."""

    path: str  # the task's path as plans show it
    run_id: str | None  # None: the apply never reached it
    status: HistoryNodeStatus
    cached: bool  # the apply reused an earlier run (started_at/finished_at are then None)
    scope: str  # local | global
    reason: str | None  # why it ran: the plan's reason code
    started_at: str | None
    finished_at: str | None
    metadata: dict[str, JsonValue]  # the run's step.metadata(...)
    error: str | None

    @property
    def duration_seconds(self) -> float | None:
        return seconds_between(self.started_at, self.finished_at)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "path": self.path,
            "run_id": self.run_id,
            "status": self.status,
            "cached": self.cached,
            "scope": self.scope,
            "reason": self.reason,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_seconds": self.duration_seconds,
            "metadata": dict(self.metadata),
            "error": self.error,
        }


@lazy_dataclass(frozen=True)
class AppliedRun:
    """One apply in the history: who ran it, when, how it ended, and what each task did."""

    record: ApplyRun
    status: ShownRunStatus
    nodes: list[HistoryNode]  # plan order once finished; while it runs, the runs started so far

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def duration_seconds(self) -> float | None:
        return seconds_between(self.record.started_at, self.record.finished_at)

    def to_json(self) -> dict[str, JsonValue]:
        record = self.record
        return {
            "id": record.id,
            "short_id": short_run_id(record.id),
            "workflow": record.workflow,
            "command": record.command,
            "workspace": record.workspace,
            "status": self.status,
            "owner": record.owner,
            "pid": record.pid,
            "host": record.host,
            "started_at": record.started_at,
            "finished_at": record.finished_at,
            "duration_seconds": self.duration_seconds,
            "node_count": record.node_count,
            "cached_node_count": record.cached_node_count,
            "ran": record.ran,
            "error": record.error,
            "nodes": [node.to_json() for node in self.nodes],
        }


@lazy_dataclass(frozen=True)
class RunLog:
    """A node run whose stored output ``rig logs`` reads: the run, where it is stored, how it stands."""

    run: NodeRun
    path: str  # the task's path as plans show it (the stored node_path of a global fragment differs)
    store: str  # the store that holds it: LOCAL or a fragment hash
    status: ShownRunStatus

    @property
    def finished(self) -> bool:
        return self.status not in ("running",)

    def to_json(self, lines: list[JsonValue]) -> dict[str, JsonValue]:
        """``rig logs --json`` of this run, given its output ``lines`` (see ``output_lines``)."""
        run = self.run
        return {
            "run_id": run.id,
            "node_path": self.path,
            "status": self.status,
            "lines": lines,
            "metadata": dict(run.metadata),
            "workflow": run.workflow,
            "apply_id": run.apply_id,
            "started_at": run.created_at,
            "finished_at": run.finished_at,
            "error": run.error,
        }


@lazy_dataclass(frozen=True)
class LogSelection:
    """What ``rig logs`` shows: one task's run, or every run of one apply (``apply`` set)."""

    runs: list[RunLog]
    apply: AppliedRun | None = None

    @property
    def finished(self) -> bool:
        """Nothing more will be written: every run is over (and the apply too, if it is one)."""
        if self.apply is not None and self.apply.status == "running":
            return False
        return all(item.finished for item in self.runs)


@lazy_dataclass(frozen=True)
class LogUpdate:
    """New output of one run (``chunks``, in order; or, read as bytes, ``pieces``); ``finished``: the
    run is over and this is its last."""

    log: RunLog
    chunks: list[OutputChunk]
    finished: bool
    skipped: bool = False  # chunks between the last ones read and these were dropped meanwhile (a full tail)
    pieces: tuple[OutputPiece, ...] = ()


def output_lines(chunks: list[OutputChunk]) -> list[JsonValue]:
    """``[{"stream", "data"}, ...]``: the chunks cut into lines, each with the stream it came from."""
    lines: list[JsonValue] = []
    for chunk in chunks:
        start = 0
        for stretch in chunk.streams:
            if not isinstance(stretch, list) or len(stretch) != 2:
                continue
            stream, length = stretch
            if not isinstance(length, int):
                continue
            text = chunk.data[start : start + length]
            start += length
            parts = text.split("\n")
            if parts and parts[-1] == "":
                parts.pop()
            lines.extend({"stream": str(stream), "data": part} for part in parts)
    return lines


__all__ = [
    "AppliedRun",
    "HistoryNode",
    "LogSelection",
    "LogUpdate",
    "RunLog",
    "output_lines",
    "seconds_between",
]
