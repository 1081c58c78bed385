"""The timeline and statistics computations (engine/timing.py) over typed applies: no state, no clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from rigcli.engine.timing import ApplyTimes, NodeTimes, run_stats, timeline

ORIGIN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
# setup, then a, b and long.first side by side, long.second after long.first, join after all.
EDGES = [
    ("setup", "a"),
    ("setup", "b"),
    ("setup", "long.first"),
    ("long.first", "long.second"),
    ("a", "join"),
    ("b", "join"),
    ("long.second", "join"),
]


def at(seconds: float) -> str:
    return (ORIGIN + timedelta(seconds=seconds)).isoformat()


def ran(path: str, start: float, end: float | None, status: str = "succeeded") -> NodeTimes:
    return NodeTimes(path, f"run-{path}", status, False, at(start), None if end is None else at(end))


def cached(path: str) -> NodeTimes:
    return NodeTimes(path, None, "cached", True, None, None)


def apply_of(*nodes: NodeTimes, finished: float | None = None) -> ApplyTimes:
    return ApplyTimes("apply-1", "web", at(0), None if finished is None else at(finished), nodes)


def test_critical_path_follows_the_longer_chain_and_parallel_bars_overlap() -> None:
    apply = apply_of(
        ran("setup", 0, 0.1),
        ran("a", 0.1, 1.1),
        ran("b", 0.1, 1.1),
        ran("long.first", 0.1, 1.1),
        ran("long.second", 1.1, 2.1),
        ran("join", 2.1, 2.2),
        finished=2.2,
    )
    drawn = timeline(apply, EDGES, ORIGIN + timedelta(seconds=10))
    assert drawn.critical_path == ("setup", "long.first", "long.second", "join")
    assert drawn.total_seconds == 2.2
    by_path = {node.path: node for node in drawn.nodes}
    assert by_path["a"].start < (by_path["b"].end or 0) and by_path["b"].start < (by_path["a"].end or 0)
    assert [node.path for node in drawn.slowest(2)] == ["a", "b"]  # 1.0 s each, plan order breaks the tie
    assert not by_path["a"].critical and by_path["long.second"].critical


def test_a_cached_task_is_a_mark_where_its_upstream_finished_and_never_starts_the_critical_path() -> None:
    apply = apply_of(
        cached("setup"),
        cached("a"),
        ran("b", 0, 0.5),
        cached("long.first"),
        ran("long.second", 0, 0.3),
        ran("join", 0.5, 0.6),
        finished=0.6,
    )
    drawn = timeline(apply, EDGES, ORIGIN)
    by_path = {node.path: node for node in drawn.nodes}
    assert (by_path["setup"].start, by_path["setup"].end) == (0.0, 0.0)
    assert by_path["a"].cached and by_path["a"].start == by_path["a"].end == 0.0
    assert drawn.critical_path == ("b", "join")
    assert drawn.to_json()["nodes"][0] == {  # type: ignore[index]
        "path": "setup",
        "start": 0.0,
        "end": 0.0,
        "status": "cached",
        "cached": True,
        "critical": False,
    }


def test_a_running_task_ends_now_and_a_dead_ones_end_is_its_start() -> None:
    apply = apply_of(ran("setup", 0, 0.1), ran("a", 0.1, None, "running"), ran("b", 0.1, None, "in-doubt"))
    drawn = timeline(apply, EDGES, ORIGIN + timedelta(seconds=3))
    by_path = {node.path: node for node in drawn.nodes}
    assert by_path["a"].end is None and drawn.duration(by_path["a"]) == drawn.total_seconds - 0.1
    assert drawn.total_seconds == 3.0
    assert by_path["b"].end == by_path["b"].start == 0.1
    assert drawn.critical_path == ("setup", "a")


def test_stats_count_cached_as_hits_and_time_only_succeeded_runs() -> None:
    applies = [
        apply_of(ran("setup", 0, 1), ran("a", 1, 3)),
        apply_of(cached("setup"), ran("a", 0, 4, "failed")),
        apply_of(cached("setup"), ran("a", 0, 5)),
        apply_of(ran("setup", 0, 3), ran("a", 3, 4)),
    ]
    stats = run_stats("web", applies, ["setup", "a"]).to_json()
    assert stats == {
        "workflow": "web",
        "applies": 4,
        "tasks": [
            {"path": "setup", "runs": 4, "cache_hit_rate": 0.5, "median_seconds": 2.0, "p95_seconds": 3.0},
            {"path": "a", "runs": 4, "cache_hit_rate": 0.0, "median_seconds": 2.0, "p95_seconds": 5.0},
        ],
    }
