"""The reference engine suite, part 3: cache fingerprints, global fragments, TTL and invalidation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.engine.configs import SCHEMA_CONFIG, TTL_CONFIG, two_days_ago
from tests.engine.support import EngineProject, EnvCounters, execute, fragment_locator, query, run_async
from tests.fakes import FakeWorkflowProvider, fresh_fake_provider


def _handler_cache_config(value: str) -> str:
    return f"""
from rigcli import workflow

app = workflow("handler-cache", providers={{}})


async def value():
    return {{"ctx": {{"value": "{value}"}}}}


workflows = app.sequence("root").task("value", value)
"""


@run_async
async def test_invalidates_task_cache_when_handler_source_changes(project: EngineProject) -> None:
    state_path = project.path / ".rig" / "state.sqlite"
    state_path.parent.mkdir()
    first_config_path = project.write_config(_handler_cache_config("one"), name="rig.one.py")
    second_config_path = project.write_config(_handler_cache_config("two"), name="rig.two.py")

    first = await project.loaded(config_path=str(first_config_path), state_path=project.state_location(state_path))
    applied = await first.planner.apply()
    assert applied.context["value"] == "one"

    cached = await first.planner.plan()
    assert cached.cached_node_count == 1

    second = await project.loaded(config_path=str(second_config_path), state_path=project.state_location(state_path))
    changed = await second.planner.plan()
    assert changed.cached_node_count == 0
    assert changed.nodes[0].status == "pending"

    reapplied = await second.planner.apply()
    assert reapplied.context["value"] == "two"
    assert len(second.project.node_runs()) == 2


def _global_fragment_config(value: str) -> str:
    return f"""
from rigcli import sequence


async def prepare(config):
    return {{"ctx": {{"value": str(config["value"])}}}}


async def install(step):
    return {{"ctx": {{"installed": step.ctx["value"]}}}}


deps = sequence("deps").configure({{"value": "{value}"}}).task("prepare", prepare).global_()

workflows = sequence("site").add(deps).task("install", install)
"""


@run_async
async def test_stores_globally_scoped_sequence_runs_in_fragment_state_and_busts_downstream_local_cache(
    project: EngineProject,
) -> None:
    state_path = project.path / ".rig" / "state.sqlite"
    fragment_root = project.path / "fragments"
    state_path.parent.mkdir()
    first_config_path = project.write_config(_global_fragment_config("one"), name="rig.one.py")
    second_config_path = project.write_config(_global_fragment_config("two"), name="rig.two.py")

    locator = fragment_locator(fragment_root)
    first = await project.applied(
        config_path=str(first_config_path),
        state_path=project.state_location(state_path),
        fragment_state_locator=locator,
    )
    assert (await first.planner.plan()).cached_node_count == 2
    assert [run.node_path for run in first.project.node_runs()] == ["install"]

    fragment_hashes = os.listdir(fragment_root)
    assert len(fragment_hashes) == 1
    fragment_runs = query(
        fragment_root / fragment_hashes[0] / "state.sqlite",
        "select node_path from workflow_node_runs order by node_path",
    )
    assert [row[0] for row in fragment_runs] == ["deps.prepare"]

    cache = await first.cache.list_cache()
    assert sorted(entry.scope for entry in cache) == ["global", "local"]

    second = await project.loaded(
        config_path=str(second_config_path),
        state_path=project.state_location(state_path),
        fragment_state_locator=locator,
    )
    changed = await second.planner.plan()
    assert changed.cached_node_count == 0

    reapplied = await second.planner.apply()
    assert reapplied.context["installed"] == "two"
    assert len(os.listdir(fragment_root)) == 2


GLOBAL_INVALIDATES_CONFIG = """
import os

from rigcli import sequence


def bump(name):
    count = int(os.environ.get(name, "0")) + 1
    os.environ[name] = str(count)
    return count


async def install():
    count = bump("RIG_GLOBAL_INSTALL_COUNT")
    return {"ctx": {"installed": f"install-{count}"}}


async def auth(step):
    count = bump("RIG_GLOBAL_AUTH_COUNT")
    return {"ctx": {**step.ctx, "token": f"token-{count}"}}


async def clone(step):
    count = bump("RIG_LOCAL_REPO_COUNT")
    return {"ctx": {**step.ctx, "repo_token": step.ctx["token"], "repo_count": count}}


async def check_auth(step):
    bump("RIG_LOCAL_CHECK_COUNT")
    if os.environ.get("RIG_FORCE_GLOBAL_REAUTH") == "1":
        os.environ["RIG_FORCE_GLOBAL_REAUTH"] = "0"
        return step.invalidate("auth")
    return {"ctx": step.ctx}


base = sequence("base").task("install", install).task("auth", auth).global_()

repo = sequence("repo").task("clone", clone)

workflows = sequence("root").add(base).add(repo).task("check-auth", check_auth, cache_ttl=0)
"""


@run_async
async def test_allows_a_later_local_task_to_invalidate_an_earlier_global_fragment_task(
    project: EngineProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_path = project.path / ".rig" / "state.sqlite"
    fragment_root = project.path / "fragments"
    state_path.parent.mkdir()

    counts = EnvCounters(
        monkeypatch,
        install="RIG_GLOBAL_INSTALL_COUNT",
        auth="RIG_GLOBAL_AUTH_COUNT",
        repo="RIG_LOCAL_REPO_COUNT",
        check="RIG_LOCAL_CHECK_COUNT",
    )
    monkeypatch.setenv("RIG_FORCE_GLOBAL_REAUTH", "0")

    project.write_config(GLOBAL_INVALIDATES_CONFIG)

    engine = await project.loaded(
        state_path=project.state_location(state_path), fragment_state_locator=fragment_locator(fragment_root)
    )

    first = await engine.planner.apply()
    assert first.context["token"] == "token-1"
    assert first.context["repo_token"] == "token-1"
    assert counts() == {"install": "1", "auth": "1", "repo": "1", "check": "1"}

    monkeypatch.setenv("RIG_FORCE_GLOBAL_REAUTH", "1")
    second = await engine.planner.apply()
    assert second.context["token"] == "token-2"
    assert second.context["repo_token"] == "token-2"
    assert counts() == {"install": "1", "auth": "2", "repo": "2", "check": "3"}
    assert len(os.listdir(fragment_root)) == 1


PROVIDER_TOKEN_CONFIG = """
import os

from rigcli import define_provider, workflow

app = workflow(
    "test",
    providers={"test": define_provider("test", {"token": lambda: os.environ.get("RIG_TEST_PROVIDER_TOKEN")})},
)


async def touch(test):
    vm = test.create_vm()
    vm.exec("touch /tmp/setup", name="touch setup")
    return {"ctx": {"vm": vm.snapshot_ref()}}


workflows = app.sequence("setup").task("touch", touch)
"""


@run_async
async def test_provider_config_contributes_to_the_workflow_cache_fingerprint(project: EngineProject) -> None:
    project.write_config(PROVIDER_TOKEN_CONFIG)

    provider = FakeWorkflowProvider()
    first = await project.applied(env={"RIG_TEST_PROVIDER_TOKEN": "one"}, provider_factory=lambda setup: provider)
    assert (await first.planner.plan()).cached_node_count == 1

    second = await project.loaded(env={"RIG_TEST_PROVIDER_TOKEN": "two"}, provider_factory=lambda setup: provider)
    assert (await second.planner.plan()).cached_node_count == 0


@run_async
async def test_treats_cached_output_schema_failures_as_cache_misses(project: EngineProject) -> None:
    project.write_config(SCHEMA_CONFIG)

    first = await project.applied(env={"RIG_SCHEMA_MODE": "old"}, provider_factory=fresh_fake_provider)
    assert (await first.planner.plan()).cached_node_count == 1

    second = await project.loaded(env={"RIG_SCHEMA_MODE": "next"}, provider_factory=fresh_fake_provider)
    plan = await second.planner.plan()
    assert plan.cached_node_count == 0
    assert plan.nodes[0].status == "pending"


@run_async
async def test_expires_task_cache_when_cache_ttl_has_elapsed(project: EngineProject) -> None:
    project.write_config(TTL_CONFIG)

    engine = await project.applied()
    assert (await engine.planner.plan()).cached_node_count == 1

    execute(engine.project.info().state_path, "update workflow_node_runs set created_at = ?", (two_days_ago(),))

    expired = await engine.planner.plan()
    assert expired.cached_node_count == 0
    assert expired.nodes[0].status == "pending"


REAUTH_CONFIG = """
import os

from rigcli import sequence


async def prepare():
    return {"ctx": {"prepared": True}}


async def github_auth():
    count = int(os.environ.get("RIG_AUTH_COUNT", "0")) + 1
    os.environ["RIG_AUTH_COUNT"] = str(count)
    return {"ctx": {"token": f"token-{count}"}}


async def check_auth(step):
    count = int(os.environ.get("RIG_CHECK_COUNT", "0")) + 1
    os.environ["RIG_CHECK_COUNT"] = str(count)
    if os.environ.get("RIG_FORCE_REAUTH") == "1":
        os.environ["RIG_FORCE_REAUTH"] = "0"
        return step.invalidate("github-auth")
    return {"ctx": step.ctx}


workflows = (
    sequence("reauth")
    .task("prepare", prepare)
    .task("github-auth", github_auth)
    .task("check-auth", check_auth, cache_ttl=0)
)
"""


@run_async
async def test_step_invalidate_invalidates_a_previous_task_and_replays_from_that_point(
    project: EngineProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = EnvCounters(monkeypatch, auth="RIG_AUTH_COUNT", check="RIG_CHECK_COUNT")
    monkeypatch.setenv("RIG_FORCE_REAUTH", "0")
    project.write_config(REAUTH_CONFIG)

    engine = await project.loaded()

    first = await engine.planner.apply()
    assert first.context["token"] == "token-1"
    assert counts() == {"auth": "1", "check": "1"}

    monkeypatch.setenv("RIG_FORCE_REAUTH", "1")
    second = await engine.planner.apply()
    assert second.context["token"] == "token-2"
    assert counts() == {"auth": "2", "check": "3"}

    valid_runs = [run for run in engine.project.node_runs() if not run.invalidated]
    assert sorted(run.node_path for run in valid_runs) == ["check-auth", "github-auth", "prepare"]


@run_async
async def test_global_fragments_live_beside_the_project_state_without_a_locator(project: EngineProject) -> None:
    """SQLite: one file per fragment under $RIG_HOME; PostgreSQL: rows in the fragments schema."""
    project.write_config(_global_fragment_config("one"))
    engine = await project.applied()
    [fragment] = [entry for entry in await engine.cache.list_cache() if entry.scope == "global"]
    if project.backend == "postgresql":
        fragments = os.environ["RIG_STATE_URL"].rsplit("fragments_schema=", 1)[1]
        found = query(os.environ["RIG_STATE_URL"], f"select workflow, node_path from {fragments}.workflow_node_runs")
        assert found == [(f"fragment:{fragment.fragment_hash}", "deps.prepare")]
    else:
        path = Path(os.environ["RIG_HOME"]) / "fragments" / str(fragment.fragment_hash) / "state.sqlite"
        assert query(path, "select node_path from workflow_node_runs") == [("deps.prepare",)]
    assert await engine.cache.clear_cache(scope="global") == 1
    assert [entry.scope for entry in await engine.cache.list_cache()] == ["local"]
