"""The pure half of the cache: task keys, provider and fragment hashes, and judge_run's reason codes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from rigcli import define_provider, sequence
from rigcli.authoring.nodes import SequenceNode
from rigcli.cachekeys import (
    REASON_MESSAGES,
    fragment_hash,
    judge_attempt,
    judge_in_doubt,
    judge_run,
    name_the_change,
    provider_fingerprint,
    reason,
    task_key,
)
from rigcli.fingerprint.parts import changes
from rigcli.graph import TaskSpec, compile_workflow
from rigcli.records import Liveness, LockHolder, NodeRun

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def _fingerprint(fn: object) -> str:
    # Stands in for the handler fingerprint: the code object's identity is enough here.
    return getattr(fn, "__name__", type(fn).__name__)


def _install(step: object) -> None:
    return None


def _other(step: object) -> None:
    return None


def _task(root: SequenceNode) -> TaskSpec:
    return compile_workflow(root, {}, lambda fragment: "f").tasks[-1]


def _run(**changes: object) -> NodeRun:
    run = NodeRun(
        id="r1",
        workflow="web",
        node_path="install",
        node_name="install",
        node_kind="task",
        node_key="k",
        provider_fingerprint="p",
        upstream_run_ids=["u1"],
        output={"ctx": {}},
        artifacts=[],
        status="succeeded",
        invalidated=False,
        created_at=(NOW - timedelta(hours=1)).isoformat(),
        finished_at=None,
        error=None,
        pid=None,
        host=None,
        apply_id=None,
        metadata={},
    )
    return replace(run, **changes)  # type: ignore[arg-type]


def test_the_task_key_covers_what_the_design_says_and_nothing_else() -> None:
    base = _task(sequence("root").task("install", _install))
    key = task_key(base, _fingerprint)
    assert key.startswith("sha256-")
    assert task_key(_task(sequence("root").task("install", _install)), _fingerprint) == key
    changed = {
        "handler": sequence("root").task("install", _other),
        "configure": sequence("root").configure(size="xl").task("install", _install),
        "version": sequence("root").task("install", _install, version="2"),
        "path": sequence("root").add(sequence("nested").task("install", _install)),
    }
    for what, root in changed.items():
        assert task_key(_task(root), _fingerprint) != key, what
    # Not part of the key: the TTL (judged on its own) and the workflow's name (a lookup column).
    assert task_key(_task(sequence("root").task("install", _install, cache_ttl="7d")), _fingerprint) == key
    assert task_key(_task(sequence("other").task("install", _install)), _fingerprint) == key


def test_provider_fingerprint_of_an_empty_scope_is_a_constant_and_checks_count() -> None:
    assert provider_fingerprint({}, []) == provider_fingerprint({}, [])
    scope = {"box": {"provider_id": "local", "config": {}, "plugin": None}}
    plain = provider_fingerprint(scope, [])
    assert plain != provider_fingerprint({}, [])
    assert provider_fingerprint(scope, [{"id": "login", "fingerprint": "user-a"}]) != plain
    assert plain.startswith("sha256-")


def test_a_fragment_hash_ignores_provider_config_but_not_code() -> None:
    def fragment(provider_image: str, handler: object = _install) -> SequenceNode:
        box = define_provider("docker", image=provider_image)
        return sequence("tools").add_provider("box", box).task("install", handler)  # type: ignore[arg-type]

    first = fragment_hash(fragment("a"), _fingerprint)
    assert fragment_hash(fragment("b"), _fingerprint) == first
    assert fragment_hash(fragment("a", _other), _fingerprint) != first


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, None),
        ({"node_key": "other"}, "task-changed"),
        ({"provider_fingerprint": "other"}, "provider-changed"),
        ({"upstream_run_ids": ["u2"]}, "upstream-changed"),
        ({"invalidated": True}, "invalidated"),
    ],
)
def test_judge_run_gives_the_first_failing_reason(changes: dict[str, object], expected: str | None) -> None:
    why = judge_run(_run(**changes), key="k", provider_fp="p", upstream=["u1"], ttl=None, now=NOW)
    assert (why.code if why else None) == expected


def test_the_reasons_are_checked_in_the_documented_order() -> None:
    everything_wrong = _run(node_key="x", provider_fingerprint="x", upstream_run_ids=[], invalidated=True)
    why = judge_run(everything_wrong, key="k", provider_fp="p", upstream=["u1"], ttl=0, now=NOW)
    assert why is not None and why.code == "task-changed"


@pytest.mark.parametrize(
    ("ttl", "created_at", "expired"),
    [
        (7200.0, (NOW - timedelta(hours=1)).isoformat(), False),
        (1800.0, (NOW - timedelta(hours=1)).isoformat(), True),
        (0.0, NOW.isoformat(), True),  # 0 means run on every apply
        (7200.0, "2026-11-30T11:00:00Z", False),  # other tools' "Z" form
        (7200.0, "not a timestamp", True),  # unreadable reads as very old, never a false hit
    ],
)
def test_expiry(ttl: float, created_at: str, expired: bool) -> None:
    why = judge_run(_run(created_at=created_at), key="k", provider_fp="p", upstream=["u1"], ttl=ttl, now=NOW)
    assert (why is not None and why.code == "expired") is expired


def test_every_reason_has_a_message() -> None:
    for code, message in REASON_MESSAGES.items():
        assert reason(code).message == message and message
    assert reason("artifact-invalid", "gone").to_json() == {
        "code": "artifact-invalid",
        "message": "cached artifact is no longer valid",
        "detail": "gone",
    }


def _dead(run: NodeRun) -> bool:
    return run.pid == 999_999


@pytest.mark.parametrize(
    ("running", "succeeded", "expected"),
    [
        ([], [], None),
        ([{"pid": 999_999}], [], "in-doubt"),  # the only run was cut off: not "no previous run"
        ([{"pid": 1}], [], None),  # still running in a live process: not in doubt
        ([{"pid": 999_999, "created_at": "2026-11-30T12:00:00"}], [{"created_at": "2026-11-30T11:00:00"}], "in-doubt"),
        ([{"pid": 999_999, "created_at": "2026-11-30T10:00:00"}], [{"created_at": "2026-11-30T11:00:00"}], None),
    ],
)
def test_judge_in_doubt_looks_at_the_newest_run(
    running: list[dict[str, object]], succeeded: list[dict[str, object]], expected: str | None
) -> None:
    runs = [_run(status="running", **changes) for changes in running]
    why = judge_in_doubt(runs, [_run(**changes) for changes in succeeded], left_by_dead_process=_dead)
    assert (why.code if why else None) == expected
    if why is not None:
        assert why.message == REASON_MESSAGES["in-doubt"]
        assert why.detail is not None and runs[0].id in why.detail


def _alive_if(pid: int) -> Callable[[NodeRun], Liveness]:
    def liveness(run: NodeRun) -> Liveness:
        if run.pid == pid:
            holder = LockHolder(pid=pid, host="box", user="ann", command="apply", started_at="")
            return Liveness(True, "holds the lock", holder)
        return Liveness(False, f"rig pid {run.pid} on box has exited")

    return liveness


@pytest.mark.parametrize(
    ("attempt", "succeeded_at", "expected"),
    [
        (None, "2026-11-30T11:00:00", None),
        ({"status": "failed", "error": "KeyError: 'x'"}, None, "previous-run-failed"),
        ({"status": "interrupted"}, None, "previous-run-interrupted"),
        ({"status": "running", "pid": 7}, None, "running-elsewhere"),
        ({"status": "running", "pid": 8}, None, "in-doubt"),
        ({"status": "abandoned", "error": "rig pid 8 on box has exited"}, None, "in-doubt"),
        ({"status": "failed"}, "2026-11-30T11:00:00", "previous-run-failed"),  # failed after the success
        ({"status": "failed", "created_at": "2026-11-30T10:00:00"}, "2026-11-30T11:00:00", None),  # then fixed
    ],
)
def test_judge_attempt_names_what_the_newest_run_without_a_result_did(
    attempt: dict[str, object] | None, succeeded_at: str | None, expected: str | None
) -> None:
    attempts = [] if attempt is None else [_run(id="r2", **{"created_at": "2026-11-30T12:00:00", **attempt})]
    succeeded = [] if succeeded_at is None else [_run(created_at=succeeded_at)]
    why = judge_attempt(attempts, succeeded, liveness=_alive_if(7))
    assert (why.code if why else None) == expected
    if expected == "running-elsewhere":
        assert (
            why is not None
            and why.message == f"{REASON_MESSAGES['running-elsewhere']}: rig apply (pid 7 on box by ann)"
        )
    elif why is not None:
        assert why.message == REASON_MESSAGES[why.code]
        assert why.detail is not None and why.detail.startswith("run r2 started")


def test_a_changed_part_is_named_and_the_rest_counted() -> None:
    old = {"handler:tools.py:install": "a", "helper:tools.py:_pin": "b", "config:python": "c", "version": "d"}
    assert name_the_change(reason("task-changed"), old, old) == reason("task-changed")
    assert name_the_change(reason("task-changed"), None, old) == reason("task-changed")  # stored before parts
    new = {**old, "helper:tools.py:_pin": "B", "config:extra": "e"}
    named = name_the_change(reason("task-changed"), old, new)
    assert named.to_json() == {
        "code": "task-changed",
        "message": "helper _pin() changed (and 1 more)",
        "component": "helper _pin()",
        "detail": 'helper _pin() changed; config key "extra" added',
    }
    assert changes({"provider:box": "a"}, {"provider:box": "b"}) == [('provider "box"', "config changed")]
    assert changes({"handler:tools.py:install": "a"}, {}) == [("handler install (tools.py)", "removed")]
