"""A fork holds the state lock for its apply and its records, not while its create hook runs."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from rigcli.errors import RigError
from tests.engine.support import EngineProject, run_async
from tests.helpers import wait_for

CONFIG = """
import os
import time
from pathlib import Path

from rigcli import sequence


def create(workflow, workspace):
    gate = Path(os.environ["GATE_DIR"])
    (gate / f"{workspace.name}.started").touch()
    deadline = time.monotonic() + 30
    while not (gate / f"{workspace.name}.go").exists():  # a long copy, as far as rig can tell
        if time.monotonic() > deadline:
            raise TimeoutError("never told to go")
        time.sleep(0.02)
    return {"made_by": workspace.name}


workflows = sequence("box").task("prepare", lambda step: {"ctx": {"base": "b1"}}).workspace(create=create)
"""


def _fork_in_a_thread(project: EngineProject, name: str, outcome: dict[str, Any]) -> threading.Thread:
    async def fork() -> None:
        engine = await project.loaded()
        outcome["record"] = await engine.workspaces.fork(name)

    def run() -> None:
        try:
            asyncio.run(fork())
        except BaseException as exc:  # handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def gate(project: EngineProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "gate"
    directory.mkdir()
    monkeypatch.setenv("GATE_DIR", str(directory))
    project.write_config(CONFIG)
    return directory


@run_async
async def test_another_fork_runs_while_a_create_hook_is_still_running(project: EngineProject, gate: Path) -> None:
    first: dict[str, Any] = {}
    thread = _fork_in_a_thread(project, "one", first)
    wait_for((gate / "one.started").exists, "the first fork to start", timeout=20)

    (gate / "two.go").touch()
    second = await project.loaded(lock_wait=False)  # a held lock would raise StateLockedError at once
    ready = await second.workspaces.fork("two")
    assert (ready.status, ready.ctx) == ("ready", {"made_by": "two"})
    assert {item.name: item.status for item in second.workspaces.list_workspaces()} == {
        "one": "creating",
        "two": "ready",
    }

    (gate / "one.go").touch()
    thread.join(30)
    assert "error" not in first, first
    assert first["record"].status == "ready" and first["record"].pid is None


@run_async
async def test_rm_refuses_a_create_that_is_still_running_and_force_overrides(
    project: EngineProject, gate: Path
) -> None:
    first: dict[str, Any] = {}
    thread = _fork_in_a_thread(project, "one", first)
    wait_for((gate / "one.started").exists, "the first fork to start", timeout=20)

    other = await project.loaded(lock_wait=False)
    with pytest.raises(RigError, match=r"Workspace one is still being created by rig \(pid \d+\); wait for it"):
        await other.workspaces.remove_workspace("one")
    (creating,) = other.workspaces.list_workspaces()
    assert creating.status == "creating" and creating.pid is not None

    (gate / "one.go").touch()
    thread.join(30)
    assert "error" not in first, first
    removed = await other.workspaces.remove_workspace("one")
    assert removed.name == "one" and other.workspaces.list_workspaces() == []


@run_async
async def test_rm_force_takes_a_live_create_and_the_create_then_says_so(project: EngineProject, gate: Path) -> None:
    first: dict[str, Any] = {}
    thread = _fork_in_a_thread(project, "one", first)
    wait_for((gate / "one.started").exists, "the first fork to start", timeout=20)

    other = await project.loaded(lock_wait=False)
    removed = await other.workspaces.remove_workspace("one", force=True)
    assert removed.status == "creating" and other.workspaces.list_workspaces() == []

    (gate / "one.go").touch()
    thread.join(30)
    assert isinstance(first.get("error"), RigError)
    assert "Workspace one was removed while it was being created" in str(first["error"])
    assert other.workspaces.list_workspaces() == []  # never brought back
