"""The run journal: recorded before the handler, finished once, invalidated with its dependants."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import pytest

from rigcli.errors import StateError, TaskError
from rigcli.records import VERY_OLD, NodeRun, age_seconds, parse_timestamp, timestamp, utc_datetime, utc_now
from rigcli.state import StateStore
from rigcli.state.process import left_by_dead_process, this_host
from tests.backends import execute


def _start(store: StateStore, path: str, upstream: Sequence[str] = (), workflow: str = "web") -> str:
    return store.start_run(
        workflow=workflow,
        node_path=path,
        node_name=path.rsplit(".", 1)[-1],
        node_kind="task",
        node_key=f"key-{path}",
        provider_fingerprint="providers-1",
        upstream_run_ids=upstream,
    )


def _succeed(store: StateStore, path: str, upstream: Sequence[str] = (), workflow: str = "web") -> str:
    run_id = _start(store, path, upstream, workflow)
    store.finish_run(run_id, status="succeeded", output={"ctx": {"path": path}})
    return run_id


def _run(store: StateStore, run_id: str) -> NodeRun | None:
    """The run with this id, read through the store's own listing."""
    return next((run for run in store.list_runs() if run.id == run_id), None)


def _sql(location: str, statement: str, *params: object) -> None:
    execute(location, statement, params)


def test_run_is_recorded_running_before_it_finishes(store: StateStore) -> None:
    run_id = _start(store, "base.install", upstream=["up-1"])
    running = _run(store, run_id)
    assert running is not None
    assert (running.status, running.output, running.finished_at) == ("running", None, None)
    assert running.pid == os.getpid()
    assert running.upstream_run_ids == ["up-1"]
    assert parse_timestamp(running.created_at) > datetime.now(timezone.utc) - timedelta(minutes=1)

    artifact = {"provider": "local", "kind": "dirSnapshot", "snapshot_id": "s1"}
    store.finish_run(run_id, status="succeeded", output={"ctx": {"snap": artifact}}, artifacts=[artifact])
    done = _run(store, run_id)
    assert done is not None
    assert done.status == "succeeded"
    assert done.output == {"ctx": {"snap": artifact}}
    assert done.artifacts == [artifact]
    assert done.finished_at is not None
    assert done.invalidated is False


def test_a_run_finishes_once(store: StateStore) -> None:
    run_id = _start(store, "a")
    store.finish_run(run_id, status="failed", error="boom")
    with pytest.raises(StateError, match="already failed"):
        store.finish_run(run_id, status="succeeded", output={"ctx": {}})
    with pytest.raises(StateError, match="Unknown run nope"):
        store.finish_run("nope", status="failed")
    with pytest.raises(ValueError, match="status"):
        store.finish_run(_start(store, "b"), status="running")
    failed = _run(store, run_id)
    assert failed is not None and (failed.status, failed.error, failed.output) == ("failed", "boom", None)


def test_non_json_output_is_refused_and_the_run_stays_running(store: StateStore) -> None:
    run_id = _start(store, "a")
    with pytest.raises(TaskError, match=r"must be JSON-serializable \(at output\.ctx\.bad\)"):
        store.finish_run(run_id, status="succeeded", output={"ctx": {"bad": {1, 2}}})
    run = _run(store, run_id)
    assert run is not None and run.status == "running"


def test_runs_by_path_has_only_succeeded_runs_newest_first(store: StateStore) -> None:
    old = _succeed(store, "a")
    new = _succeed(store, "a")
    store.finish_run(_start(store, "a"), status="failed", error="x")
    _start(store, "a")  # still running
    store.finish_run(_start(store, "b"), status="interrupted")
    other_workflow = _succeed(store, "a", workflow="api")
    invalidated = _succeed(store, "c")
    store.invalidate_runs([invalidated])

    by_path = store.runs_by_path("web")

    assert {path: [run.id for run in runs] for path, runs in by_path.items()} == {
        "a": [new, old],
        "c": [invalidated],
    }
    assert by_path["c"][0].invalidated is True
    assert [run.id for run in store.runs_by_path("api")["a"]] == [other_workflow]


def test_newest_first_follows_created_at_then_insertion(store: StateStore, state_location: str) -> None:
    first, second, third = _succeed(store, "a"), _succeed(store, "a"), _succeed(store, "a")
    # Same timestamp for all: insertion order decides; an older created_at (in "Z" form) goes last.
    _sql(state_location, "UPDATE workflow_node_runs SET created_at = '2030-01-01T00:00:00.000000+00:00'")
    _sql(state_location, "UPDATE workflow_node_runs SET created_at = '2026-11-27T13:00:00.000Z' WHERE id = ?", third)
    assert [run.id for run in store.runs_by_path("web")["a"]] == [second, first, third]
    assert [run.id for run in store.list_runs(workflow="web")] == [second, first, third]


def test_list_runs_filters(store: StateStore) -> None:
    a = _succeed(store, "a")
    b = _start(store, "b")
    c = _succeed(store, "a", workflow="api")
    assert {run.id for run in store.list_runs()} == {a, b, c}
    assert [run.id for run in store.list_runs(workflow="web", node_path="a")] == [a]
    assert [run.id for run in store.list_runs(statuses=["running"])] == [b]
    assert {run.id for run in store.list_runs(statuses={"running", "succeeded"}, workflow="web")} == {a, b}
    assert store.list_runs(statuses=[]) == []


def test_invalidation_cascades_to_runs_built_on_invalidated_ones(store: StateStore) -> None:
    a = _succeed(store, "a")
    b = _succeed(store, "b", [a])
    c = _succeed(store, "c", [b])
    d = _succeed(store, "d")  # unrelated
    e = _succeed(store, "e", [d, c])  # joins both: built on c, so stale too

    assert store.invalidate_runs([b]) == 3
    flags = {run.id: run.invalidated for run in store.list_runs()}
    assert flags == {a: False, b: True, c: True, d: False, e: True}
    # Already-invalidated rows are not counted again.
    assert store.invalidate_runs([b, c]) == 0


def test_invalidation_without_cascade_marks_only_the_given_runs(store: StateStore) -> None:
    a = _succeed(store, "a")
    b = _succeed(store, "b", [a])
    assert store.invalidate_runs([a], cascade=False) == 1
    flags = {run.id: run.invalidated for run in store.list_runs()}
    assert flags == {a: True, b: False}


def test_invalidate_paths_marks_every_valid_run_of_the_path_and_cascades(store: StateStore) -> None:
    older = _succeed(store, "base.install")
    newer = _succeed(store, "base.install")
    child = _succeed(store, "check", [newer])
    elsewhere = _succeed(store, "base.install", workflow="api")
    untouched = _succeed(store, "other")

    assert store.invalidate_paths("web", ["base.install", "no.such.path"]) == 3
    flags = {run.id: run.invalidated for run in store.list_runs()}
    assert flags == {older: True, newer: True, child: True, elsewhere: False, untouched: False}
    assert store.invalidate_paths("web", []) == 0


def test_delete_runs(store: StateStore) -> None:
    _succeed(store, "a")
    _succeed(store, "b")
    kept = _succeed(store, "a", workflow="api")
    assert store.delete_runs("web") == 2
    assert [run.id for run in store.list_runs()] == [kept]
    assert store.delete_runs() == 1
    assert store.list_runs() == []


def test_running_runs_of_dead_processes_on_this_host_are_in_doubt(store: StateStore, state_location: str) -> None:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = _start(store, "dead")
        live_child = _start(store, "live-child")
        mine = _start(store, "mine")
        elsewhere = _start(store, "elsewhere")
        done = _succeed(store, "done")
        _sql(
            state_location,
            "UPDATE workflow_node_runs SET pid = ? WHERE id IN (?, ?, ?)",
            finished.pid,
            dead,
            elsewhere,
            done,
        )
        _sql(state_location, "UPDATE workflow_node_runs SET pid = ? WHERE id = ?", sleeper.pid, live_child)
        _sql(state_location, "UPDATE workflow_node_runs SET host = ? WHERE id = ?", f"not-{this_host()}", elsewhere)

        in_doubt = {run.id: left_by_dead_process(run) for run in store.list_runs()}
        assert in_doubt == {dead: True, live_child: False, mine: False, elsewhere: False, done: False}
        statuses = {run.id: run.status for run in store.list_runs()}
        assert statuses == {
            dead: "running",
            live_child: "running",
            mine: "running",
            elsewhere: "running",
            done: "succeeded",
        }
        cut_off = _run(store, dead)
        assert cut_off is not None and (cut_off.pid, cut_off.host) == (finished.pid, this_host())
    finally:
        sleeper.kill()
        sleeper.wait()


def test_created_at_written_by_hand_is_read_in_any_iso_form(store: StateStore, state_location: str) -> None:
    # Port of "expires task cache when cacheTTL has elapsed": rows aged with raw SQL in "Z" form.
    run_id = _succeed(store, "daily-check")
    assert age_seconds(store.runs_by_path("web")["daily-check"][0].created_at) < 60
    two_days_ago = (datetime.now(timezone.utc) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    _sql(state_location, "UPDATE workflow_node_runs SET created_at = ?", two_days_ago)
    run = _run(store, run_id)
    assert run is not None and run.created_at == two_days_ago
    assert 2 * 86400 - 60 < age_seconds(run.created_at) < 2 * 86400 + 60
    assert parse_timestamp("2026-11-27T13:00:00.000Z") == datetime(2026, 11, 27, 13, tzinfo=timezone.utc)
    assert parse_timestamp("yesterday-ish") == VERY_OLD
    assert age_seconds("") > 50 * 365 * 86400


def test_now_is_stored_as_timestamp_spells_the_datetime_so_text_order_is_time_order() -> None:
    before = timestamp(utc_datetime())
    now = utc_now()  # read without datetime
    after = timestamp(utc_datetime())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", now), now
    assert before <= now <= after
    assert abs(age_seconds(now)) < 60
