"""The workspace effects journal: a failed create's leftovers are journaled for its record, and rm cleans them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rigcli import create_engine
from rigcli.errors import NotFoundError, TaskError
from rigcli.state import create_state_store

CONFIG = """
from rigcli import define_provider, workflow

app = workflow("journal", providers={"box": define_provider("local")})

def create(workspace, box):
    machine = box.create_machine()
    machine.write_text("marker", workspace.name)
    raise RuntimeError("provisioning broke half-way")

def remove(workspace, box):
    raise AssertionError("a failed workspace has no ctx for the remove hook")

workflows = app.sequence("root").task("ready", lambda step: None).workspace(create=create, remove=remove)
"""


def test_a_failed_create_is_journaled_with_its_machine_and_rm_cleans_it_once(tmp_path: Path) -> None:
    (tmp_path / "rig_config.py").write_text(CONFIG)

    async def scenario() -> None:
        engine = create_engine(tmp_path)
        await engine.load()
        with pytest.raises(TaskError, match="provisioning broke half-way"):
            await engine.workspaces.fork(name="dev")

        [record] = engine.workspaces.list_workspaces()
        assert record.status == "failed"
        assert "provisioning broke half-way" in (record.error or "")
        [resource] = record.resources  # from the effects journal: owned by the record's id
        assert (resource["provider_id"], resource["kind"], resource["status"]) == ("local", "machine", "confirmed")
        machine_dir = tmp_path / ".rig" / str(resource["resource"]["path"])
        assert (machine_dir / "marker").read_text() == "dev"

        removed = await engine.workspaces.remove_workspace(name="dev")
        assert removed.name == "dev"
        assert not machine_dir.exists()
        assert engine.workspaces.list_workspaces() == []
        with pytest.raises(NotFoundError):
            await engine.workspaces.remove_workspace(name="dev")
        engine.close()

    asyncio.run(scenario())


def test_a_name_of_a_failed_create_cannot_be_reused_until_removed(tmp_path: Path) -> None:
    (tmp_path / "rig_config.py").write_text(CONFIG)

    async def scenario() -> None:
        engine = create_engine(tmp_path)
        await engine.load()
        with pytest.raises(TaskError):
            await engine.workspaces.fork(name="dev")
        with pytest.raises(Exception, match='run "rig rm dev" to clean it up first'):
            await engine.workspaces.fork(name="dev")
        engine.close()

    asyncio.run(scenario())


OWNED_CONFIG = """
from rigcli import define_provider, workflow

app = workflow("owned", providers={"box": define_provider("local")})

def build(step, box):
    machine = box.create_machine()
    return {"ctx": {"base": machine.snapshot_ref(), "build_machine": machine.id}}

def create(workflow, workspace, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}

workflows = app.sequence("root").task("build", build).workspace(create=create)
"""


def test_effects_are_owned_by_the_run_or_workspace_they_were_made_for(tmp_path: Path) -> None:
    (tmp_path / "rig_config.py").write_text(OWNED_CONFIG)

    async def scenario() -> None:
        engine = create_engine(tmp_path)
        await engine.load()
        record = await engine.workspaces.fork(name="dev")
        [run] = engine.project.node_runs()
        store = create_state_store(project_dir=tmp_path)
        owners = {
            effect.id: (effect.kind, effect.status, effect.owner_kind, effect.owner_id)
            for effect in store.list_effects()
        }
        ctx = run.output if isinstance(run.output, dict) else {}
        assert owners == {
            ctx["build_machine"]: ("machine", "confirmed", "run", run.id),
            ctx["base"]["snapshot_id"]: ("snapshot", "confirmed", "run", run.id),
            record.ctx["machine"]: ("machine", "confirmed", "workspace", record.id),
        }
        [attached] = record.resources
        assert attached["effect_id"] == record.ctx["machine"]  # the record refers to its effect, no copy

        await engine.workspaces.remove_workspace(name="dev")
        assert store.get_effect(record.ctx["machine"]).status == "deleted"
        store.close()
        engine.close()

    asyncio.run(scenario())
