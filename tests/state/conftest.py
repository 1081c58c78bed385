"""Fixtures for the state tests: a real SQLite store in tmp_path, and per-user dirs kept out of $HOME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.state import StateStore, create_state_store


@pytest.fixture(autouse=True)
def _private_rig_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "rig-home"
    monkeypatch.setenv("RIG_HOME", str(home))
    monkeypatch.delenv("RIG_HOST_STORAGE_DIR", raising=False)
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def store(project_dir: Path) -> Iterator[StateStore]:
    (project_dir / ".rig").mkdir()  # the database file exists from sync on (tests read it directly)
    state = create_state_store(project_dir=project_dir)
    state.sync_schema()
    yield state
    state.close()
