"""The reference engine suite, part 2: state stores, schema resets and provider storage."""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from rigcli.state.workspaces import new_workspace
from tests.engine.configs import write_legacy_state
from tests.engine.support import EngineProject, assert_matches, query, resolve, run_async
from tests.fakes import FakePlugin, FakeWorkflowProvider, fresh_fake_provider

READY_CONFIG = """
from rigcli import define_config, sequence


async def ready():
    return {"ctx": {"ready": True}}


root = sequence("factory-test").step("ready", ready)

workflows = define_config(providers={}, workflows=[root])
"""


def _as_str(value: Any) -> str | None:
    return None if value is None else str(value)


@run_async
async def test_creates_state_through_an_injectable_state_service_factory(project: EngineProject) -> None:
    from rigcli.state import create_state_store

    project_dir = project.path
    state_path = project_dir / "custom-state.sqlite"
    project.write_config(READY_CONFIG)

    config_path = project_dir / "rig_config.py"
    calls: list[dict[str, str | None]] = []

    def state_factory(**options: Any) -> Any:
        calls.append(
            {
                "project_dir": _as_str(options.get("project_dir")),
                "config_path": _as_str(options.get("config_path")),
                "state_path": _as_str(options.get("state_path")),
            }
        )
        return create_state_store(**options)

    engine = await project.loaded(
        state_path=str(state_path), provider_factory=fresh_fake_provider, state_factory=state_factory
    )

    assert calls == [{"project_dir": str(project_dir), "config_path": str(config_path), "state_path": str(state_path)}]
    assert engine.project.info().state_path == str(state_path)

    state = create_state_store(project_dir=str(project_dir), state_path=str(project_dir / "provided-state.sqlite"))

    def refusing_factory(**options: Any) -> Any:
        raise AssertionError("state_factory should not be called when state is provided")

    engine_with_state = await project.loaded(
        provider_factory=fresh_fake_provider, state=state, state_factory=refusing_factory
    )
    assert engine_with_state.project.info().state_path == str(state.path)


@run_async
async def test_resets_stale_state_before_applying_the_current_schema(project: EngineProject) -> None:
    from rigcli.state import STATE_SCHEMA_VERSION, create_state_store
    from rigcli.state.migrations import MIGRATION_NAMES

    state_path = write_legacy_state(project.path)
    state = create_state_store(project_dir=str(project.path), state_path=str(state_path))
    result = await resolve(state.sync_schema())
    workspaces = state.list_workspaces()

    # rigkit reports the applied schema version; rig reports every migration it applied.
    assert result.applied == list(MIGRATION_NAMES)
    assert result.schema_version == STATE_SCHEMA_VERSION
    assert result.has_data_loss is True
    assert any(warning.startswith("Reset rig state database") for warning in result.warnings)
    assert workspaces == []

    now = datetime.now(timezone.utc).isoformat()
    made = new_workspace("demo", "smoke", workflow_ctx={"ready": True}, ctx={"ready": True})
    state.save_workspace(replace(made, id="workspace-2", created_at=now, updated_at=now))
    found = state.get_workspace("demo", "smoke")
    assert found is not None
    assert_matches(found.to_json(), {"name": "demo", "workflow": "smoke", "ctx": {"ready": True}})
    _close(state)


def _close(state: Any) -> None:
    close = getattr(state, "close", None)
    if close is not None:
        result = close()
        assert not inspect.isawaitable(result), "state.close() is expected to be synchronous"


PROVIDER_STORAGE_CONFIG = """
from rigcli import define_provider, workflow

app = workflow("provider-storage", providers={"test": define_provider("test", {})})


async def ready():
    return {"ctx": {"ready": True}}


workflows = app.sequence("root").task("ready", ready)
"""


@run_async
async def test_stores_provider_json_state_in_rig_owned_provider_storage(project: EngineProject) -> None:
    from rigcli.state import STATE_SCHEMA_VERSION

    def create_provider(setup: Any) -> FakeWorkflowProvider:
        setup.storage.set("ready", {"value": "provider"})
        return FakeWorkflowProvider()

    plugin = FakePlugin(create_provider)
    project.write_config(PROVIDER_STORAGE_CONFIG)

    engine = await project.loaded(providers=[plugin])
    await engine.planner.plan()

    state_path = engine.project.info().state_path
    tables = (
        "select tablename from pg_tables where schemaname = current_schema()"
        if project.backend == "postgresql"
        else "select name from sqlite_master where type = 'table' order by name"
    )
    main_tables = [row[0] for row in query(state_path, tables)]

    assert "workspaces" in main_tables
    assert "provider_state" in main_tables
    assert "runtime_metadata" in main_tables
    assert "provider_local_state" not in main_tables

    rows = query(state_path, "select value_json from provider_state where provider_id = 'test' and \"key\" = 'ready'")
    metadata_rows = query(state_path, 'select "key", value_json from runtime_metadata order by 1')

    assert (json.loads(rows[0][0])["value"] if rows else None) == "provider"
    metadata = {key: json.loads(value) for key, value in metadata_rows}
    assert metadata["state.schemaVersion"] == STATE_SCHEMA_VERSION
    assert metadata["project.dir"] == str(project.path)
    assert metadata["config.path"] == str(project.path / "rig_config.py")


@run_async
async def test_stores_provider_host_json_state_outside_project_state(project: EngineProject) -> None:
    host_storage_dir = project.path / ".host-storage"
    opened: list[str] = []

    async def create_provider(setup: Any) -> FakeWorkflowProvider:
        setup.storage.set("project", {"value": "state"})
        setup.host_storage.set("token", {"value": "secret"})
        await resolve(setup.local.open("rig://provider-auth"))
        return FakeWorkflowProvider()

    plugin = FakePlugin(create_provider)
    project.write_config(
        PROVIDER_STORAGE_CONFIG.replace('workflow("provider-storage"', 'workflow("provider-host-storage"')
    )

    engine = await project.loaded(
        host_storage_dir=str(host_storage_dir), providers=[plugin], local={"open": opened.append}
    )
    await engine.planner.plan()

    assert opened == ["rig://provider-auth"]

    files = os.listdir(host_storage_dir)
    assert len(files) == 1
    host_state = json.loads((host_storage_dir / files[0]).read_text(encoding="utf-8"))
    assert host_state["records"]["token"]["value"]["value"] == "secret"

    state_path = engine.project.info().state_path
    project_rows = query(
        state_path, "select value_json from provider_state where provider_id = 'test' and key = 'project'"
    )
    leaked_host_rows = query(
        state_path, "select value_json from provider_state where provider_id = 'test' and key = 'token'"
    )

    assert (json.loads(project_rows[0][0])["value"] if project_rows else None) == "state"
    assert leaked_host_rows == []
