"""Fixtures for engine tests: isolated rig homes, tmp projects and engines closed after each test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[2]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from tests.engine.support import EngineFactory  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_rig_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Global fragments and host storage never touch the real user data dir."""
    home = tmp_path_factory.mktemp("rig-home")
    monkeypatch.setenv("RIG_HOME", str(home))
    monkeypatch.setenv("RIG_HOST_STORAGE_DIR", str(home / "providers"))
    monkeypatch.setenv("RIG_NO_BROWSER", "1")
    monkeypatch.delenv("RIG_NO_CONSOLE_INTERCEPT", raising=False)


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def make_engine() -> Iterator[EngineFactory]:
    factory = EngineFactory()
    yield factory
    factory.close_all()
