"""Where an apply's time went (``rig runs --timeline``) and how tasks fare across applies (``--stats``).

Pure: applies come in as ``ApplyTimes`` (what the run history knows of one apply), the workflow's
edges from shape.py, and the clock as an argument.

- Offsets are seconds from the apply's start. A cached task ran nothing: it is a zero-width mark
  where its upstream tasks had finished (the start, when it has none upstream).
- The critical path is the chain that decided when the apply ended: from the task that finished
  last, back through the upstream task it waited for (the one that finished last), to a task
  with nothing upstream, less the cached tasks it starts with (they kept nothing waiting). Ties
  go to a task that ran rather than one that was cached.
- Statistics: a task's ``runs`` counts the applies it took part in, ran or cached;
  ``cache_hit_rate`` is the cached share of them; the durations are those of its runs that
  succeeded (a cached task's zero and a failed run's cut-short time would hide how long the
  work takes). ``p95`` is the nearest-rank percentile.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from rigcli.engine.results import JsonObject
from rigcli.records import parse_timestamp
from rigcli.run_ids import names
from rigcli.speed.records import lazy_dataclass

SLOWEST = 5  # the slowest tasks a timeline names
NOT_IN_TIMELINE = frozenset({"skipped"})  # never reached: nothing to draw


@lazy_dataclass(frozen=True)
class NodeTimes:
    """One task of one apply as the history records it: ran (with its times) or cached."""

    path: str
    run_id: str | None  # the run it ran, or reused when cached
    status: str  # the run's status (succeeded, failed, interrupted, running, in-doubt), or cached/skipped
    cached: bool
    started_at: str | None  # ISO-8601; None when cached
    finished_at: str | None  # None when cached or still running


@lazy_dataclass(frozen=True)
class ApplyTimes:
    """One apply: its id, when it started and ended, and its tasks in plan order."""

    id: str
    workflow: str
    started_at: str
    finished_at: str | None  # None while it runs (or when its process died)
    nodes: tuple[NodeTimes, ...]

    @property
    def ran_any(self) -> bool:
        """Whether it ran a task (rather than finding every one cached, or stopping first)."""
        return any(not node.cached and node.run_id is not None for node in self.nodes)

    @property
    def ran_ids(self) -> tuple[str, ...]:
        """The ids of the runs it ran (not those it reused: they name the apply that ran them)."""
        return tuple(node.run_id for node in self.nodes if node.run_id and not node.cached)

    def is_named(self, ref: str) -> bool:
        """Whether ``ref`` (an id, or its beginning: run_ids.py) names this apply or a run it ran."""
        return any(names(ref, run_id) for run_id in (self.id, *self.ran_ids))


@lazy_dataclass(frozen=True)
class TimelineNode:
    """A task on the timeline: offsets in seconds from the apply's start (``end`` None while running)."""

    path: str
    start: float
    end: float | None
    status: str
    cached: bool
    critical: bool

    def duration(self, now: float) -> float:
        return (now if self.end is None else self.end) - self.start


@lazy_dataclass(frozen=True)
class Timeline:
    """One apply laid on a time axis, with its critical path."""

    run_id: str
    workflow: str
    started_at: str
    total_seconds: float
    nodes: tuple[TimelineNode, ...]  # plan order
    critical_path: tuple[str, ...]

    def duration(self, node: TimelineNode) -> float:
        return node.duration(self.total_seconds)

    def slowest(self, count: int = SLOWEST) -> list[TimelineNode]:
        ran = [node for node in self.nodes if not node.cached]
        return sorted(ran, key=lambda node: -self.duration(node))[:count]

    def to_json(self) -> JsonObject:
        return {
            "run_id": self.run_id,
            "workflow": self.workflow,
            "started_at": self.started_at,
            "total_seconds": _round(self.total_seconds),
            "critical_path": list(self.critical_path),
            "nodes": [
                {
                    "path": node.path,
                    "start": _round(node.start),
                    "end": None if node.end is None else _round(node.end),
                    "status": node.status,
                    "cached": node.cached,
                    "critical": node.critical,
                }
                for node in self.nodes
            ],
        }


def _round(seconds: float) -> float:
    return round(seconds, 3)


def timeline(apply: ApplyTimes, edges: Iterable[tuple[str, str]], now: datetime) -> Timeline:
    """``apply`` on a time axis from its start; ``now`` ends what is still running."""
    origin = parse_timestamp(apply.started_at)

    def offset(text: str | None) -> float | None:
        return None if text is None else max(0.0, (parse_timestamp(text) - origin).total_seconds())

    upstream: dict[str, list[str]] = {}
    for source, target in edges:
        upstream.setdefault(target, []).append(source)
    clock = (now - origin).total_seconds()
    placed: dict[str, tuple[float, float | None]] = {}
    drawn = [node for node in apply.nodes if node.status not in NOT_IN_TIMELINE]
    for node in drawn:
        start, end = offset(node.started_at), offset(node.finished_at)
        if start is not None and end is None and node.status != "running":
            end = start  # left unfinished by a process that is gone: when it stopped is unknown
        if node.cached or start is None:
            # Where its upstream tasks had finished: the moment the apply found it cached.
            ends = [_end(placed[before], clock) for before in upstream.get(node.path, ()) if before in placed]
            start = end = max(ends, default=0.0)
        placed[node.path] = (start, end)
    finished = offset(apply.finished_at)
    total = finished if finished is not None else max((_end(span, clock) for span in placed.values()), default=0.0)
    order = {node.path: index for index, node in enumerate(drawn)}
    cached = {node.path for node in drawn if node.cached}
    path = _critical_path(placed, upstream, order, cached, clock)
    on_path = set(path)
    nodes = tuple(
        TimelineNode(
            node.path, placed[node.path][0], placed[node.path][1], node.status, node.cached, node.path in on_path
        )
        for node in drawn
    )
    return Timeline(apply.id, apply.workflow, apply.started_at, total, nodes, tuple(path))


def _end(span: tuple[float, float | None], clock: float) -> float:
    return clock if span[1] is None else span[1]


def _critical_path(
    placed: Mapping[str, tuple[float, float | None]],
    upstream: Mapping[str, Sequence[str]],
    order: Mapping[str, int],
    cached: set[str],
    clock: float,
) -> list[str]:
    def rank(path: str) -> tuple[float, bool, int]:
        return (_end(placed[path], clock), path not in cached, order[path])

    if not placed:
        return []
    current = max(placed, key=rank)
    path = [current]
    while True:
        before = [item for item in upstream.get(current, ()) if item in placed]
        if not before:
            path.reverse()
            # Cached tasks at its start took no time and kept nothing waiting.
            while len(path) > 1 and path[0] in cached:
                path.pop(0)
            return path
        current = max(before, key=rank)
        path.append(current)


# -- across applies ----------------------------------------------------------------------------


@lazy_dataclass(frozen=True)
class TaskStats:
    """One task over the applies looked at."""

    path: str
    runs: int  # applies it took part in (ran or cached)
    cached: int
    durations: tuple[float, ...]  # of its succeeded runs, in seconds

    @property
    def cache_hit_rate(self) -> float:
        return self.cached / self.runs if self.runs else 0.0

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.durations) if self.durations else None

    @property
    def p95_seconds(self) -> float | None:
        if not self.durations:
            return None
        ordered = sorted(self.durations)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]

    def to_json(self) -> JsonObject:
        median, p95 = self.median_seconds, self.p95_seconds
        return {
            "path": self.path,
            "runs": self.runs,
            "cache_hit_rate": round(self.cache_hit_rate, 4),
            "median_seconds": None if median is None else _round(median),
            "p95_seconds": None if p95 is None else _round(p95),
        }


@lazy_dataclass(frozen=True)
class RunStats:
    """``rig runs --stats``: per task, over the last ``applies`` applies of one workflow."""

    workflow: str
    applies: int
    tasks: tuple[TaskStats, ...]

    def to_json(self) -> JsonObject:
        return {"workflow": self.workflow, "applies": self.applies, "tasks": [task.to_json() for task in self.tasks]}


def run_stats(workflow: str, applies: Sequence[ApplyTimes], order: Sequence[str] = ()) -> RunStats:
    """Each task's runs, cache hits and durations over ``applies``; tasks in ``order`` first, in it."""
    runs: dict[str, int] = {}
    hits: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    for apply in applies:
        for node in apply.nodes:
            if node.status in NOT_IN_TIMELINE:
                continue
            runs[node.path] = runs.get(node.path, 0) + 1
            if node.cached:
                hits[node.path] = hits.get(node.path, 0) + 1
            elif node.status == "succeeded" and node.started_at and node.finished_at:
                took = (parse_timestamp(node.finished_at) - parse_timestamp(node.started_at)).total_seconds()
                durations.setdefault(node.path, []).append(max(0.0, took))
    position = {path: index for index, path in enumerate(order)}
    paths = sorted(runs, key=lambda path: (position.get(path, len(position)), path))
    tasks = tuple(TaskStats(path, runs[path], hits.get(path, 0), tuple(durations.get(path, ()))) for path in paths)
    return RunStats(workflow, len(applies), tasks)


__all__ = [
    "SLOWEST",
    "ApplyTimes",
    "NodeTimes",
    "RunStats",
    "TaskStats",
    "Timeline",
    "TimelineNode",
    "run_stats",
    "timeline",
]
