"""The workspace effects journal: a failed create keeps its leftovers on record, and rm cleans them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rigcli import create_engine
from rigcli.errors import NotFoundError, TaskError

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
            await engine.fork(name="dev")

        [record] = engine.list_workspaces()
        assert record["status"] == "failed"
        assert "provisioning broke half-way" in (record["error"] or "")
        [resource] = record["resources"]
        assert resource["type"] == "machine.created"
        machine_dir = Path(resource["path"])
        assert (machine_dir / "marker").read_text() == "dev"

        removed = await engine.remove_workspace(name="dev")
        assert removed["name"] == "dev"
        assert not machine_dir.exists()
        assert engine.list_workspaces() == []
        with pytest.raises(NotFoundError):
            await engine.remove_workspace(name="dev")
        engine.close()

    asyncio.run(scenario())


def test_a_name_of_a_failed_create_cannot_be_reused_until_removed(tmp_path: Path) -> None:
    (tmp_path / "rig_config.py").write_text(CONFIG)

    async def scenario() -> None:
        engine = create_engine(tmp_path)
        await engine.load()
        with pytest.raises(TaskError):
            await engine.fork(name="dev")
        with pytest.raises(Exception, match='run "rig rm dev" to clean it up first'):
            await engine.fork(name="dev")
        engine.close()

    asyncio.run(scenario())
