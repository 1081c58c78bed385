"""Read-only stores (what completion uses): never create, migrate, move aside or write."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from rigcli.errors import StateError
from rigcli.state import create_state_store
from rigcli.state.workspaces import new_workspace


def test_read_only_store_reads_a_current_database_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    writer = create_state_store(project_dir=tmp_path, state_path=path)
    made = new_workspace("dev", "w", workflow_ctx={}, ctx={"a": 1})
    writer.save_workspace(
        replace(made, id="1", created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
    )
    writer.close()

    reader = create_state_store(project_dir=tmp_path, state_path=path, read_only=True)
    assert [item.name for item in reader.list_workspaces()] == ["dev"]
    with pytest.raises(StateError, match="read-only"):
        reader.set_metadata("x", 1)
    reader.close()


def test_read_only_store_leaves_an_old_database_untouched(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    with sqlite3.connect(path) as legacy:
        legacy.execute("CREATE TABLE workspaces (id TEXT PRIMARY KEY, vm_id TEXT)")
    before = path.read_bytes()

    reader = create_state_store(project_dir=tmp_path, state_path=path, read_only=True)
    with pytest.raises(StateError, match="state database"):
        reader.list_workspaces()
    reader.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.sqlite"]


def test_read_only_store_does_not_create_a_missing_database(tmp_path: Path) -> None:
    reader = create_state_store(project_dir=tmp_path, state_path=tmp_path / "none.sqlite", read_only=True)
    with pytest.raises(StateError):
        reader.list_workspaces()
    assert not (tmp_path / "none.sqlite").exists()
