"""Fixtures for engine tests: a tmp project whose engines are closed after each test.

The isolated RIG_HOME, host storage and browser settings come from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine.support import EngineProject


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EngineProject]:
    """An empty project directory to write a config into, and the engines opened over it."""
    harness = EngineProject(tmp_path / "project", monkeypatch)
    yield harness
    harness.close_all()
