"""DESIGN §3: one test per row of the cache reason table, read through ``engine.explain``."""

from __future__ import annotations

import subprocess
import sys

from rigcli.cachekeys import REASON_MESSAGES
from tests.engine.configs import SCHEMA_CONFIG, TTL_CONFIG, two_days_ago
from tests.engine.support import EngineProject, execute, reason_codes, record_events, run_async
from tests.fakes import FakeWorkflowProvider, fresh_fake_provider


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped) on this host."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


# Two tasks; a's ``version`` and whether b exists are chosen by the environment at load time.
CHAIN_CONFIG = """
import os

from rigcli import sequence


def a():
    return {"ctx": {"a": 1}}


def b(step):
    return {"ctx": {**step.ctx, "b": 2}}


chain = sequence("chain").task("a", a, version=os.environ.get("RIG_A_VERSION", "1"))
if os.environ.get("RIG_WITH_B", "1") == "1":
    chain = chain.task("b", b)

workflows = chain
"""

# A module-level constant used by the handler, chosen by the environment at load time.
CONSTANT_CONFIG = """
import os

from rigcli import sequence

GREETING = os.environ.get("RIG_GREETING", "hello")


def greet():
    return {"ctx": {"greeting": GREETING}}


workflows = sequence("constant").task("greet", greet)
"""

PROVIDER_CONFIG = """
from rigcli import define_provider, env, workflow

app = workflow("reasons", providers={"test": define_provider("test", token=env("RIG_REASON_TOKEN"))})


def build(test):
    vm = test.create_vm()
    vm.exec("touch /tmp/built", name="build")
    return {"ctx": {"vm": vm.snapshot_ref()}}


def after(step):
    return {"ctx": {**step.ctx, "after": True}}


workflows = app.sequence("reasons").task("build", build).task("after", after)
"""


@run_async
async def test_reason_cached_when_every_condition_holds(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    engine = await project.applied()

    explanations = await engine.cache.explain()
    assert {item.path: (item.status, item.reason.code) for item in explanations} == {
        "a": ("cached", "cached"),
        "b": ("cached", "cached"),
    }


@run_async
async def test_reason_no_previous_run(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    engine = await project.loaded()

    explanations = await engine.cache.explain()
    assert explanations[0].path == "a"
    assert explanations[0].status == "pending"
    assert explanations[0].reason.code == "no-previous-run"


@run_async
async def test_reason_task_changed_by_version(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    await project.applied(env={"RIG_A_VERSION": "1"})

    second = await project.loaded(env={"RIG_A_VERSION": "2"})
    assert (await reason_codes(second))["a"] == "task-changed"


@run_async
async def test_reason_task_changed_by_module_constant(project: EngineProject) -> None:
    project.write_config(CONSTANT_CONFIG)
    first = await project.applied(env={"RIG_GREETING": "hello"})
    assert await reason_codes(first) == {"greet": "cached"}

    second = await project.loaded(env={"RIG_GREETING": "goodbye"})
    assert await reason_codes(second) == {"greet": "task-changed"}


@run_async
async def test_reason_provider_changed(project: EngineProject) -> None:
    project.write_config(PROVIDER_CONFIG)
    provider = FakeWorkflowProvider()
    await project.applied(env={"RIG_REASON_TOKEN": "one"}, provider_factory=lambda setup: provider)

    second = await project.loaded(env={"RIG_REASON_TOKEN": "two"}, provider_factory=lambda setup: provider)
    assert (await reason_codes(second))["build"] == "provider-changed"


@run_async
async def test_reason_upstream_changed(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)

    # Run a@v1 then b on top of it.
    await project.applied(env={"RIG_A_VERSION": "1", "RIG_WITH_B": "1"})

    # Re-run a alone (v2): a gets a new run id, b's stored run still points at the old one.
    await project.applied(env={"RIG_A_VERSION": "2", "RIG_WITH_B": "0"})

    third = await project.loaded(env={"RIG_WITH_B": "1"})
    assert await reason_codes(third) == {"a": "cached", "b": "upstream-changed"}


@run_async
async def test_reason_invalidated_manually_and_by_cascade(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    engine = await project.applied()

    assert await engine.cache.invalidate(task="a") == 2
    statuses = {entry.node_path: (entry.status, entry.invalidated) for entry in await engine.cache.list_cache()}
    assert statuses == {"a": ("invalidated", True), "b": ("invalidated", True)}
    # b's own run is invalidated (cascade), but a is pending in front of it, so b cannot be
    # judged yet: its explanation is upstream-pending.
    assert await reason_codes(engine) == {"a": "invalidated", "b": "upstream-pending"}


@run_async
async def test_reason_expired(project: EngineProject) -> None:
    project.write_config(TTL_CONFIG)
    engine = await project.applied()
    assert await reason_codes(engine) == {"daily-check": "cached"}

    execute(engine.project.info().state_path, "update workflow_node_runs set created_at = ?", (two_days_ago(),))
    assert await reason_codes(engine) == {"daily-check": "expired"}


@run_async
async def test_reason_output_schema_invalid(project: EngineProject) -> None:
    project.write_config(SCHEMA_CONFIG)
    await project.applied(env={"RIG_SCHEMA_MODE": "old"}, provider_factory=fresh_fake_provider)

    second = await project.loaded(env={"RIG_SCHEMA_MODE": "next"}, provider_factory=fresh_fake_provider)
    assert await reason_codes(second) == {"value": "output-schema-invalid"}


@run_async
async def test_reason_artifact_invalid(project: EngineProject) -> None:
    project.write_config(PROVIDER_CONFIG)
    provider = FakeWorkflowProvider()
    engine = await project.loaded(env={"RIG_REASON_TOKEN": "one"}, provider_factory=lambda setup: provider)
    applied = await engine.planner.apply()
    assert applied.context["vm"] == {"provider": "test", "kind": "vmSnapshot", "snapshot_id": "snap-1"}
    assert (await engine.planner.plan()).cached_node_count == 2

    provider.artifacts_valid = False  # the snapshot is gone
    assert (await reason_codes(engine))["build"] == "artifact-invalid"
    plan = await engine.planner.plan()
    assert [node.status for node in plan.nodes] == ["pending", "pending"]
    assert {"provider": "test", "kind": "vmSnapshot", "snapshot_id": "snap-1"} in provider.validated


@run_async
async def test_reason_upstream_pending(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    await project.applied(env={"RIG_A_VERSION": "1"})

    second = await project.loaded(env={"RIG_A_VERSION": "2"})
    assert await reason_codes(second) == {"a": "task-changed", "b": "upstream-pending"}
    plan = await second.planner.plan()
    assert [(node.path, node.status, node.reason.code) for node in plan.nodes] == [
        ("a", "pending", "task-changed"),
        ("b", "pending", "upstream-pending"),
    ]


@run_async
async def test_reason_in_doubt(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    engine = await project.applied()
    [b_run] = [run for run in engine.project.node_runs() if run.node_path == "b"]
    dead = dead_pid()
    # b's newest run was left running by a process that is gone.
    execute(
        engine.project.info().state_path,
        "insert into workflow_node_runs select 'in-doubt-run', workflow, node_path, node_name, node_kind, "
        "node_key, provider_fingerprint, upstream_run_ids_json, NULL, '[]', 'running', FALSE, "
        "'2999-01-01T00:00:00.000000+00:00', NULL, NULL, ?, host, apply_id, metadata_json "
        "from workflow_node_runs where id = ?",
        (dead, b_run.id),
    )
    # An older run that still passes every check is reused; the cut-off one never is.
    assert await reason_codes(engine) == {"a": "cached", "b": "cached"}

    # With nothing reusable, the cut-off run is why b is pending (not "invalidated").
    execute(
        engine.project.info().state_path,
        "update workflow_node_runs set invalidated = TRUE where id = ?",
        (b_run.id,),
    )
    explanations = await engine.cache.explain()
    assert {item.path: (item.status, item.reason.code) for item in explanations} == {
        "a": ("cached", "cached"),
        "b": ("pending", "in-doubt"),
    }
    assert [node.reason.message for node in (await engine.planner.plan()).nodes][1] == REASON_MESSAGES["in-doubt"]


@run_async
async def test_an_in_doubt_run_older_than_a_later_success_is_history(project: EngineProject) -> None:
    project.write_config(CHAIN_CONFIG)
    engine = await project.applied()
    [a_run] = [run for run in engine.project.node_runs() if run.node_path == "a"]
    execute(
        engine.project.info().state_path,
        "insert into workflow_node_runs select 'old-in-doubt', workflow, node_path, node_name, node_kind, "
        "node_key, provider_fingerprint, upstream_run_ids_json, NULL, '[]', 'running', FALSE, "
        "'2000-01-01T00:00:00.000000+00:00', NULL, NULL, ?, host, apply_id, metadata_json "
        "from workflow_node_runs where id = ?",
        (dead_pid(), a_run.id),
    )
    assert await reason_codes(engine) == {"a": "cached", "b": "cached"}


@run_async
async def test_fresh_runs_announce_their_artifacts_and_provider_events(project: EngineProject) -> None:
    project.write_config(PROVIDER_CONFIG)
    engine = await project.loaded(env={"RIG_REASON_TOKEN": "one"}, provider_factory=fresh_fake_provider)
    events = record_events(engine)

    await engine.planner.apply()
    snapshot = {"provider": "test", "kind": "vmSnapshot", "snapshot_id": "snap-1"}
    artifacts = [(event["node_path"], event["artifact"]) for event in events if event["type"] == "artifact.created"]
    assert artifacts == [("build", snapshot)]
    (vm_created,) = [event for event in events if event["type"] == "vm.created"]
    assert (vm_created["node_path"], vm_created["provider_id"], vm_created["vm_id"]) == ("build", "test", "vm-1")

    events.clear()
    await engine.planner.apply()  # everything cached: nothing is created again
    assert [event for event in events if event["type"] in {"artifact.created", "vm.created"}] == []
