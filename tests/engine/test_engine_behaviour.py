"""DESIGN behaviours beyond the reference suite: parallel branches, configure stacks, provider
scopes, invalidation limits, load-time errors, events, cache maintenance and secrets."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from rigcli.errors import RigError
from tests.engine.configs import TERMINAL_CONFIG, meeting_branches, write_legacy_state
from tests.engine.support import (
    EngineProject,
    EnvCounters,
    execute,
    fragment_locator,
    query,
    reason_codes,
    record_events,
    resolve,
    run_async,
)
from tests.fakes import FakeWorkflowProvider, fresh_fake_provider

# --- parallel branches ---------------------------------------------------------------------

BARRIER_CONFIG = """
from rigcli import define_provider, workflow

app = workflow("together", providers={"test": define_provider("test")})


def left_wait(test):
    test.meet()
    return {"ctx": {"side": "left"}}


def right_wait(test):
    test.meet()
    return {"ctx": {"side": "right"}}


def join(step):
    return {"ctx": step.ctx}""" + meeting_branches("together", task="wait", then="join")


@run_async
async def test_parallel_branches_run_concurrently(project: EngineProject) -> None:
    # Each branch blocks on a two-party barrier: only two branches running at the same time can
    # pass it. Run one after the other, the first branch would time out and fail the apply.
    provider = FakeWorkflowProvider(barrier=threading.Barrier(2, timeout=10))
    project.write_config(BARRIER_CONFIG)
    engine = await project.loaded(provider_factory=lambda setup: provider)

    applied = await engine.planner.apply()

    assert applied.context == {"left": {"side": "left"}, "right": {"side": "right"}}
    assert not provider.barrier.broken  # type: ignore[union-attr]


NAMESPACE_CONFIG = """
import os

from rigcli import sequence


def base():
    return {"ctx": {os.environ.get("RIG_BASE_KEY", "base"): 1}}


def left_task(step):
    return {"ctx": {"seen_base": step.ctx["base"], "side": "left"}}


def right_task(step):
    return {"ctx": {"side": "right"}}


def join(step):
    return {"ctx": step.ctx}


workflows = (
    sequence("ns")
    .task("base", base)
    .parallel(left=sequence("left").task("l", left_task), right=sequence("right").task("r", right_task))
    .task("join", join)
)
"""


@run_async
async def test_parallel_branch_outputs_are_namespaced_under_branch_names(project: EngineProject) -> None:
    project.write_config(NAMESPACE_CONFIG)
    engine = await project.loaded()

    plan = await engine.planner.plan()
    assert [node.path for node in plan.nodes] == ["base", "left.l", "right.r", "join"]

    applied = await engine.planner.apply()
    assert applied.context == {
        "base": 1,
        "left": {"seen_base": 1, "side": "left"},
        "right": {"side": "right"},
    }


@run_async
async def test_parallel_branch_name_conflicting_with_a_context_key_is_an_error(project: EngineProject) -> None:
    project.write_config(NAMESPACE_CONFIG.replace('step.ctx["base"]', 'step.ctx["left"]'))
    engine = await project.loaded(env={"RIG_BASE_KEY": "left"})  # base now returns {"left": 1}

    with pytest.raises(RigError, match=r"(?i)conflict") as raised:
        await engine.planner.apply()
    assert "left" in str(raised.value)


# --- outputs and configure -----------------------------------------------------------------


@run_async
async def test_fresh_output_failing_the_output_schema_fails_the_task(project: EngineProject) -> None:
    project.write_config(
        """
        from pydantic import BaseModel

        from rigcli import sequence


        class Count(BaseModel):
            count: int


        def produce():
            return {"ctx": {"count": "many"}}


        workflows = sequence("strict").task("produce", produce, output=Count)
        """
    )
    engine = await project.loaded()

    with pytest.raises(RigError):
        await engine.planner.apply()
    assert (await engine.planner.plan()).cached_node_count == 0
    assert [run for run in engine.project.node_runs() if run.status == "succeeded"] == []


@run_async
async def test_context_that_is_not_json_names_the_offending_key_path(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import sequence


        def bad():
            return {"ctx": {"nested": {"fn": {1, 2}}}}


        workflows = sequence("bad").task("bad", bad)
        """
    )
    engine = await project.loaded()

    with pytest.raises(RigError, match="must be JSON-serializable") as raised:
        await engine.planner.apply()
    assert "nested.fn" in str(raised.value)


CONFIGURE_CONFIG = """
import os

from rigcli import sequence


def show(config):
    return {"ctx": {"config": dict(config)}}


inner = sequence("inner").configure(a=3).task("show", show)

workflows = (
    sequence("cfg").configure({"a": 1}).configure(b=int(os.environ.get("RIG_CFG_B", "2"))).add(inner)
)
"""


@run_async
async def test_configure_stacks_merge_from_root_to_leaf(project: EngineProject) -> None:
    project.write_config(CONFIGURE_CONFIG)
    first = await project.loaded()
    applied = await first.planner.apply()
    assert applied.context == {"config": {"a": 3, "b": 2}}
    assert (await first.planner.plan()).cached_node_count == 1

    second = await project.loaded(env={"RIG_CFG_B": "5"})
    assert await reason_codes(second) == {"inner.show": "task-changed"}
    assert (await second.planner.apply()).context == {"config": {"a": 3, "b": 5}}


# --- provider scopes (rigkit-anchor §8 items 7 and 8) ---------------------------------------

SCOPED_PROVIDER_CONFIG = """
from rigcli import define_provider, env, sequence


def pure_before():
    return {"ctx": {"pure": True}}


def uses_provider(step, test):
    return {"ctx": {**step.ctx, "token": test.config["token"]}}


def after_provider(step):
    return {"ctx": {**step.ctx, "after": True}}


workflows = (
    sequence("scoped")
    .task("pure-before", pure_before)
    .add_provider("test", define_provider("test", token=env("RIG_SCOPED_TOKEN")))
    .task("uses-provider", uses_provider)
    .task("after-provider", after_provider)
)
"""


def _fake_per_config(setup: Any) -> FakeWorkflowProvider:
    return FakeWorkflowProvider(config=setup.config)


@run_async
async def test_scoped_provider_fingerprint_only_affects_tasks_in_its_scope(project: EngineProject) -> None:
    project.write_config(SCOPED_PROVIDER_CONFIG)
    first = await project.loaded(env={"RIG_SCOPED_TOKEN": "one"}, provider_factory=_fake_per_config)
    assert (await first.planner.apply()).context == {"pure": True, "token": "one", "after": True}

    second = await project.loaded(env={"RIG_SCOPED_TOKEN": "two"}, provider_factory=_fake_per_config)
    plan = await second.planner.plan()
    assert [node.status for node in plan.nodes] == ["cached", "pending", "pending"]
    codes = await reason_codes(second)
    assert codes["pure-before"] == "cached"
    assert codes["uses-provider"] == "provider-changed"


@run_async
async def test_provider_added_only_for_a_workspace_operation_never_affects_the_setup_cache(
    project: EngineProject,
) -> None:
    project.write_config(
        """
        from rigcli import define_provider, env, sequence


        def setup():
            return {"ctx": {"ready": True}}


        def create(workspace):
            return {"name": workspace.name}


        def ping(workspace, test):
            return {"workspace": workspace.name, "token": test.config["token"]}


        workflows = (
            sequence("ops")
            .task("setup", setup)
            .workspace(create=create)
            .add_provider("test", define_provider("test", token=env("RIG_OP_TOKEN")))
            .workspace_operation("ping", run=ping)
        )
        """
    )
    await project.applied(env={"RIG_OP_TOKEN": "one"}, provider_factory=_fake_per_config)

    second = await project.loaded(env={"RIG_OP_TOKEN": "two"}, provider_factory=_fake_per_config)
    plan = await second.planner.plan()
    assert (plan.cached_node_count, plan.node_count) == (1, 1)

    await second.workspaces.fork(name="box")
    assert await second.operations.run_workspace_operation("box", "ping") == {"workspace": "box", "token": "two"}


@run_async
async def test_fragment_provider_override_stays_inside_and_fragments_inherit_parent_providers(
    project: EngineProject,
) -> None:
    project.write_config(
        """
        from rigcli import define_provider, sequence, workflow

        app = workflow("scopes", providers={"test": define_provider("test", token="parent")})


        def before(step, test):
            return {"ctx": {**step.ctx, "before": test.config["token"]}}


        def inside(step, test):
            return {"ctx": {**step.ctx, "inside": test.config["token"]}}


        def generic(step, test):
            return {"ctx": {**step.ctx, "generic": test.config["token"]}}


        def after(step, test):
            return {"ctx": {**step.ctx, "after": test.config["token"]}}


        override = (
            sequence("override")
            .add_provider("test", define_provider("test", token="fragment"))
            .task("inside", inside)
        )
        inherit = sequence("inherit").task("generic", generic)

        workflows = app.sequence("root").task("before", before).add(override).add(inherit).task("after", after)
        """
    )
    engine = await project.loaded(provider_factory=_fake_per_config)

    applied = await engine.planner.apply()
    assert applied.context == {"before": "parent", "inside": "fragment", "generic": "parent", "after": "parent"}


# --- step.invalidate ------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["missing", "later"])
@run_async
async def test_step_invalidate_of_a_task_that_has_not_run_earlier_fails(target: str, project: EngineProject) -> None:
    project.write_config(
        f"""
        from rigcli import sequence


        def first():
            return {{"ctx": {{"a": 1}}}}


        def second(step):
            return step.invalidate("{target}")


        def later(step):
            return None


        workflows = sequence("inv").task("first", first).task("second", second).task("later", later)
        """
    )
    engine = await project.loaded()

    with pytest.raises(RigError, match="has not run earlier"):
        await engine.planner.apply()


@run_async
async def test_step_invalidate_stops_after_nine_attempts(
    project: EngineProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = EnvCounters(monkeypatch, auth="RIG_LOOP_AUTH_COUNT", check="RIG_LOOP_CHECK_COUNT")
    project.write_config(
        """
        import os

        from rigcli import sequence


        def bump(name):
            os.environ[name] = str(int(os.environ[name]) + 1)


        def auth():
            bump("RIG_LOOP_AUTH_COUNT")
            return {"ctx": {"token": os.environ["RIG_LOOP_AUTH_COUNT"]}}


        def check(step):
            bump("RIG_LOOP_CHECK_COUNT")
            return step.invalidate("auth")


        workflows = sequence("loop").task("auth", auth).task("check", check, cache_ttl=0)
        """
    )
    engine = await project.loaded()

    with pytest.raises(RigError, match="repeatedly invalidated"):
        await engine.planner.apply()
    assert counts() == {"check": "9", "auth": "9"}


# --- load-time errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "builder",
    [
        '.operation("plan", run=noop)',
        '.operation("apply", run=noop)',
        '.operation("cache", run=noop)',
        '.operation("rm", run=noop)',
        '.workspace_operation("fork", run=noop)',
    ],
)
@run_async
async def test_reserved_operation_ids_fail_at_load(builder: str, project: EngineProject) -> None:
    project.write_config(
        f"""
        from rigcli import sequence


        def ready():
            return {{"ctx": {{"ready": True}}}}


        def noop():
            return None


        workflows = sequence("reserved").task("ready", ready){builder}
        """
    )
    engine = project.engine()
    with pytest.raises(RigError, match="reserved"):
        await engine.load()


@run_async
async def test_workspace_operation_id_with_a_slash_fails_at_load(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import sequence


        def noop():
            return None


        workflows = sequence("slash").task("ready", noop).workspace_operation("a/b", run=noop)
        """
    )
    engine = project.engine()
    with pytest.raises(RigError, match="/"):
        await engine.load()


@run_async
async def test_handler_asking_for_an_unavailable_parameter_fails_at_load(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import define_provider, workflow

        app = workflow("params", providers={"test": define_provider("test")})


        def needs_bogus(step, bogus):
            return None


        workflows = app.sequence("params").task("needs-bogus", needs_bogus)
        """
    )
    engine = project.engine(provider_factory=fresh_fake_provider)
    with pytest.raises(RigError) as raised:
        await engine.load()
    message = str(raised.value)
    assert "bogus" in message
    for available in ["step", "providers", "config", "test"]:
        assert available in message


# --- events ---------------------------------------------------------------------------------

CORE_EVENT_TYPES = {
    "plan.created",
    "workflow.apply.started",
    "node.started",
    "log.output",
    "node.completed",
    "workflow.apply.completed",
}


@run_async
async def test_one_simple_apply_emits_events_in_order(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import sequence


        def hello():
            print("hello")
            return {"ctx": {"said": "hello"}}


        workflows = sequence("events").task("hello", hello)
        """
    )
    engine = await project.loaded()
    events = record_events(engine)

    await engine.planner.apply()

    types = [event["type"] for event in events if event["type"] in CORE_EVENT_TYPES]
    if "plan.created" in types:
        assert types.index("plan.created") < types.index("workflow.apply.started")
        types.remove("plan.created")
    assert types == [
        "workflow.apply.started",
        "node.started",
        "log.output",
        "node.completed",
        "workflow.apply.completed",
    ]
    json.dumps(events)  # every event is JSON-serializable

    (log,) = [event for event in events if event["type"] == "log.output"]
    assert (log["node_path"], log["stream"], log["data"]) == ("hello", "info", "hello")
    (completed,) = [event for event in events if event["type"] == "node.completed"]
    (run,) = engine.project.node_runs()
    assert completed["node_path"] == "hello"
    assert completed["run_id"] == run.id


@run_async
async def test_interactions_emit_awaiting_and_completed_events_and_stop_once(project: EngineProject) -> None:
    project.write_config(TERMINAL_CONFIG)
    provider = FakeWorkflowProvider()

    async def present(request: dict[str, Any]) -> None:
        return None

    engine = await project.loaded(provider_factory=lambda setup: provider, interaction={"present": present})
    events = record_events(engine)

    await engine.planner.apply()

    interaction_events = [event for event in events if event["type"].startswith("interaction.")]
    assert [event["type"] for event in interaction_events] == [
        "interaction.awaiting_user",
        "interaction.completed",
    ]
    awaiting = interaction_events[0]
    assert (awaiting["node_path"], awaiting["title"], awaiting["url"]) == (
        "login",
        "GitHub auth",
        "http://127.0.0.1/fake-terminal",
    )
    assert provider.terminal_stopped == 1
    json.dumps(events)


# --- cache maintenance ----------------------------------------------------------------------

CLEAR_CONFIG = """
from rigcli import sequence


def prepare():
    return {"ctx": {"value": "prepared"}}


def install(step):
    return {"ctx": {"installed": step.ctx["value"]}}


deps = sequence("deps").task("prepare", prepare).global_()

workflows = sequence("site").add(deps).task("install", install)
"""


@run_async
async def test_clear_cache_by_scope(project: EngineProject) -> None:
    project.write_config(CLEAR_CONFIG)
    engine = await project.applied(fragment_state_locator=fragment_locator(project.path / "fragments"))
    assert sorted(entry.scope for entry in await engine.cache.list_cache()) == ["global", "local"]

    assert await engine.cache.clear_cache(scope="local") == 1
    assert [entry.scope for entry in await engine.cache.list_cache()] == ["global"]
    assert [node.status for node in (await engine.planner.plan()).nodes] == ["cached", "pending"]

    assert await engine.cache.clear_cache(scope="global") == 1
    assert await engine.cache.list_cache() == []
    assert [node.status for node in (await engine.planner.plan()).nodes] == ["pending", "pending"]


CASCADE_CONFIG = """
import os

from rigcli import sequence


def bump(name):
    os.environ[name] = str(int(os.environ.get(name, "0")) + 1)


def a():
    bump("RIG_CASCADE_A")
    return {"ctx": {"a": 1}}


def b(step):
    bump("RIG_CASCADE_B")
    return {"ctx": {**step.ctx, "b": 2}}


def c(step):
    bump("RIG_CASCADE_C")
    return {"ctx": {**step.ctx, "c": 3}}


workflows = sequence("cascade").task("a", a).task("b", b).task("c", c)
"""


@run_async
async def test_manual_invalidate_cascades_to_dependent_runs(
    project: EngineProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = EnvCounters(monkeypatch, a="RIG_CASCADE_A", b="RIG_CASCADE_B", c="RIG_CASCADE_C")
    project.write_config(CASCADE_CONFIG)
    engine = await project.applied()

    assert await engine.cache.invalidate(task="b") == 2
    statuses = {entry.node_path: entry.status for entry in await engine.cache.list_cache()}
    assert statuses == {"a": "cached", "b": "invalidated", "c": "invalidated"}
    assert [node.status for node in (await engine.planner.plan()).nodes] == ["cached", "pending", "pending"]
    assert await reason_codes(engine) == {"a": "cached", "b": "invalidated", "c": "upstream-pending"}

    applied = await engine.planner.apply()
    assert applied.context == {"a": 1, "b": 2, "c": 3}
    assert counts() == {"a": "1", "b": "2", "c": "2"}
    assert (await engine.planner.plan()).cached_node_count == 3


# --- secrets --------------------------------------------------------------------------------

SECRET_CONFIG = """
from rigcli import define_provider, secret, workflow

app = workflow("secrets", providers={"test": define_provider("test", token=secret("RIG_SECRET_TOKEN"))})


def touch(test):
    vm = test.create_vm()
    vm.exec("touch /tmp/secret-task", name="touch")
    return {"ctx": {"vm": vm.snapshot_ref()}}


workflows = app.sequence("secrets").task("touch", touch)
"""


def _bytes_under(directory: Path) -> dict[str, bytes]:
    """Every file under the state's directory; on PostgreSQL, every row of the state's tables."""
    if str(directory).startswith("postgresql:"):
        url = os.environ["RIG_STATE_URL"]
        tables = [row[0] for row in query(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        return {table: repr(query(url, f"SELECT * FROM {table}")).encode() for table in tables}
    return {str(path): path.read_bytes() for path in directory.rglob("*") if path.is_file()}


@run_async
async def test_secret_provider_config_never_reaches_the_state_database_but_still_busts_the_cache(
    project: EngineProject,
) -> None:
    first_secret = "s3cret-token-4f1c9a7e"
    second_secret = "s3cret-token-b82d0e51"
    project.write_config(SECRET_CONFIG)

    seen_configs: list[Any] = []

    def factory(setup: Any) -> FakeWorkflowProvider:
        seen_configs.append(dict(setup.config))
        return FakeWorkflowProvider()

    first = await project.loaded(env={"RIG_SECRET_TOKEN": first_secret}, provider_factory=factory)
    events = record_events(first)
    await first.planner.apply()
    assert (await first.planner.plan()).cached_node_count == 1
    assert seen_configs and seen_configs[0]["token"] == first_secret  # the provider does get it

    state_dir = Path(first.project.info().state_path).parent
    forbidden = [first_secret.encode(), hashlib.sha256(first_secret.encode()).hexdigest().encode()]
    for path, data in _bytes_under(state_dir).items():
        for needle in forbidden:
            assert needle not in data, f"{path} contains the secret (or its plain hash)"
    assert first_secret not in json.dumps(events)
    assert query(first.project.info().state_path, "select node_path from workflow_node_runs") == [("touch",)]

    second = await project.loaded(env={"RIG_SECRET_TOKEN": second_secret}, provider_factory=factory)
    plan = await second.planner.plan()
    assert plan.cached_node_count == 0
    assert (await reason_codes(second))["touch"] == "provider-changed"

    await second.planner.apply()
    for path, data in _bytes_under(state_dir).items():
        assert second_secret.encode() not in data, f"{path} contains the secret"


# --- state files ----------------------------------------------------------------------------


@pytest.mark.sqlite_only
@run_async
async def test_stale_state_is_moved_aside_to_a_backup_next_to_it(project: EngineProject) -> None:
    from rigcli.state import create_state_store

    state_path = write_legacy_state(project.path)
    state = create_state_store(project_dir=str(project.path), state_path=str(state_path))
    result = await resolve(state.sync_schema())
    try:
        assert result.has_data_loss is True
        backup = Path(result.backup_path)
        assert backup.parent == state_path.parent
        assert backup != state_path
        assert any(backup.name in warning for warning in result.warnings)
        assert query(backup, "select name, vm_id from workspaces") == [("demo", "vm-1")]
    finally:
        close = getattr(state, "close", None)
        if close is not None:
            close()


@pytest.mark.sqlite_only
@run_async
async def test_state_from_a_newer_schema_is_refused_and_left_untouched(project: EngineProject) -> None:
    from rigcli.state import STATE_SCHEMA_VERSION

    project.write_config(CASCADE_CONFIG)
    (project.path / ".rig").mkdir()  # plan alone creates no state where nothing exists yet
    first = await project.loaded()
    await first.planner.plan()
    state_path = Path(first.project.info().state_path)
    project.close(first)

    execute(
        state_path,
        "update runtime_metadata set value_json = ? where key = 'state.schemaVersion'",
        (json.dumps(STATE_SCHEMA_VERSION + 1),),
    )
    before = state_path.read_bytes()

    second = project.engine()
    with pytest.raises(RigError):
        await second.load()
        await second.planner.plan()
    assert state_path.read_bytes() == before


# --- console capture ------------------------------------------------------------------------

CONSOLE_CONFIG = """
import logging

from rigcli import define_provider, workflow

app = workflow("console", providers={"test": define_provider("test")})


def left_talk(test):
    print("left before")
    test.meet()
    print("left after")
    return {"ctx": {"side": "left"}}


def right_talk(test):
    print("right before")
    test.meet()
    logging.getLogger("rig-test").warning("right careful")
    return {"ctx": {"side": "right"}}


async def summary(step):
    print("summary async")
    logging.getLogger("rig-test").error("summary failed nothing")
    return None""" + meeting_branches("console", task="talk", then="summary")


@run_async
async def test_console_output_is_attributed_to_its_node_while_branches_overlap(project: EngineProject) -> None:
    project.write_config(CONSOLE_CONFIG)
    provider = FakeWorkflowProvider(barrier=threading.Barrier(2, timeout=10))
    engine = await project.loaded(provider_factory=lambda setup: provider)
    events = record_events(engine)

    await engine.planner.apply()

    logs = {(event["node_path"], event["stream"], event["data"]) for event in events if event["type"] == "log.output"}
    assert logs == {
        ("left.talk", "info", "left before"),
        ("left.talk", "info", "left after"),
        ("right.talk", "info", "right before"),
        ("right.talk", "warn", "right careful"),
        ("summary", "info", "summary async"),
        ("summary", "stderr", "summary failed nothing"),
    }


@run_async
async def test_console_capture_can_be_turned_off(project: EngineProject) -> None:
    project.write_config(
        """
        from rigcli import sequence


        def hello():
            print("hello")
            return None


        workflows = sequence("quiet").task("hello", hello)
        """
    )
    engine = await project.loaded(env={"RIG_NO_CONSOLE_INTERCEPT": "1"})
    events = record_events(engine)

    await engine.planner.apply()

    assert [event for event in events if event["type"] == "log.output"] == []
    assert [event["type"] for event in events if event["type"] == "node.completed"] == ["node.completed"]
