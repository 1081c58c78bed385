"""Human views of the run history: ``rig runs`` tables, and ``rig logs`` writing stored output as it was printed."""

from __future__ import annotations

import contextlib
from typing import TextIO

from rigcli.engine.history_views import AppliedRun, HistoryNode, LogUpdate, RunLog
from rigcli.records import shown_time
from rigcli.render.console import no_color
from rigcli.render.lines import format_duration
from rigcli.render.plain import is_terminal
from rigcli.render.stored_bytes import StoredBytes
from rigcli.render.tables import print_message, print_table
from rigcli.run_ids import short_run_id
from rigcli.sanitize import sanitize
from rigcli.speed.pipes import widen_pipe
from rigcli.streams import real_stdout, write_bytes

RUNS_COLUMNS = ["run", "command", "started", "by", "workflow", "workspace", "status", "took", "tasks"]
APPLY_COMMANDS = ("apply", "fork")  # the rows of applies; the others are workspace entries
NODE_COLUMNS = ["#", "task", "status", "took", "run", "why"]


def _took(seconds: float | None) -> str:
    return "" if seconds is None else format_duration(seconds)


def _when(timestamp: str | None) -> str:
    return shown_time(timestamp)


def _tasks(applied: AppliedRun) -> str:
    """``ran 2, cached 3``, and the task it failed at."""
    record = applied.record
    if record.command not in APPLY_COMMANDS:
        return ""  # a workspace entry runs a hook or an operation, no tasks (rig logs --workspace shows it)
    if record.ran is None:
        return f"{len(applied.nodes)} started"
    text = f"ran {record.ran}, cached {record.cached_node_count or 0}"
    if applied.status not in ("failed", "interrupted"):
        return text
    failed = next((node.path for node in applied.nodes if node.status in ("failed", "interrupted")), None)
    return f"{text}; {applied.status} at {failed}" if failed else text


def print_runs(applies: list[AppliedRun]) -> None:
    rows = [
        [
            short_run_id(applied.id),
            applied.record.command,
            _when(applied.record.started_at),
            applied.record.owner or "",
            applied.record.workflow,
            applied.record.workspace or "",
            applied.status,
            _took(applied.duration_seconds),
            _tasks(applied),
        ]
        for applied in applies
    ]
    print_table(RUNS_COLUMNS, rows, empty="no applies recorded yet (rig apply records one)")


def _node_row(index: int, node: HistoryNode) -> list[object]:
    run = short_run_id(node.run_id) if node.run_id else ""
    return [index, node.path, node.status, _took(node.duration_seconds), run, node.reason or ""]


def print_apply(applied: AppliedRun) -> None:
    record = applied.record
    by = f" by {record.owner}" if record.owner else ""
    took = f", took {_took(applied.duration_seconds)}" if applied.duration_seconds is not None else ""
    started = _when(record.started_at)
    where = f"{record.workflow}  {record.workspace}" if record.workspace else record.workflow
    title = f"{record.command} {short_run_id(record.id)}  {where}  {applied.status}{by}, {started}{took}"
    rows = [_node_row(index, node) for index, node in enumerate(applied.nodes, start=1)]
    print_table(NODE_COLUMNS, rows, empty="no tasks recorded", title=title)
    if record.error:
        print_message(f"error: {record.error}", style="red", err=False)


class LogWriter:
    """Writes stored output to stdout as it was printed: a run's header when showing an apply,
    colour only on a terminal that wants it, and a line on stderr for a run that did not succeed.

    ``prefixed`` (an apply followed: parallel branches' lines interleave): each line starts with
    its task's path (``left.build | ...``), as ``--progress plain`` shows them."""

    def __init__(self, *, headers: bool, prefixed: bool = False) -> None:
        self.stream: TextIO = real_stdout()
        with contextlib.suppress(OSError, ValueError):  # a stream with no descriptor has no pipe
            widen_pipe(self.stream.fileno())
        self.colour = is_terminal(self.stream) and not no_color()
        self.bytes = StoredBytes(lambda data: write_bytes(self.stream, data), colour=self.colour)
        self.headers = headers
        self.prefixed = prefixed
        self.seen: set[str] = set()
        self.open_line: str | None = None  # the run whose last line written has no end yet

    def write(self, update: LogUpdate) -> None:
        log = update.log
        parts: list[str] = []
        if log.run.id not in self.seen:
            self.seen.add(log.run.id)
            if self.headers:
                parts.append(f"==> {sanitize(log.path)} (run {short_run_id(log.run.id)}) <==\n")
        if update.skipped:
            parts.append("… output dropped here while it was followed (RIG_LOG_CAP) …\n")
        for chunk in update.chunks:
            data = chunk.data
            if not self.colour and ("\x1b" in data or "\x9b" in data):
                data = sanitize(data)  # stored with its colour; a pipe or NO_COLOR gets none
            parts.extend(self._prefixed(log, data) if self.prefixed else [data])
        # Chunk by chunk, not joined: a 50 MB run is not copied once more on its way out.
        for part in parts:
            self.stream.write(part)
        for piece in update.pieces:
            self.bytes.write(piece.data, ends_chunk=piece.ends_chunk)
        if parts or update.pieces:
            self.stream.flush()
        if update.finished:
            self.ended(log)

    def _prefixed(self, log: RunLog, data: str) -> list[str]:
        """``data``'s lines, each new one after ``log``'s path; another run's unfinished line ended first."""
        parts: list[str] = []
        if self.open_line not in (None, log.run.id):
            parts.append("\n")
            self.open_line = None
        prefix = f"{sanitize(log.path)} | "
        for line in data.splitlines(keepends=True):
            parts.append(line if self.open_line == log.run.id else prefix + line)
            self.open_line = None if line.endswith(("\n", "\r")) else log.run.id
        return parts

    def ended(self, log: RunLog) -> None:
        if log.status == "succeeded":
            return
        if log.status == "running":
            print_message(f"{log.path} is still running: rig logs --follow {log.path}", style="dim")
        elif log.status == "in-doubt":
            print_message(f"{log.path} was left running by a rig process that is gone", style="yellow")
        else:
            error = (log.run.error or log.status).splitlines()[0] if (log.run.error or log.status) else log.status
            print_message(f"{log.path} {log.status}: {error}", style="red")


__all__ = ["LogWriter", "print_apply", "print_runs"]
