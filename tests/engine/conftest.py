"""Fixtures for engine tests: a tmp project whose engines are closed after each test.

The isolated RIG_HOME, host storage and browser settings come from ``tests/conftest.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[2]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from tests.engine.support import EngineProject  # noqa: E402


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EngineProject]:
    """An empty project directory to write a config into, and the engines opened over it."""
    harness = EngineProject(tmp_path / "project", monkeypatch)
    yield harness
    harness.close_all()
