"""Fixtures for CLI tests: projects on disk, and `rig` run against them (in-process unless asked otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.cli_support import DEV_CONFIG, MULTI_CONFIG, Result, run_rig, write_project

Rig = Callable[..., Result]


@pytest.fixture
def dev_project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "dev-project", DEV_CONFIG)


@pytest.fixture
def multi_project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "multi-project", MULTI_CONFIG)


@pytest.fixture
def rig(dev_project: Path) -> Rig:
    """`rig(...)` in the dev project; pass cwd= to run elsewhere, subprocess=True for a real process."""

    def run(*args: str, cwd: Path | None = None, **options: object) -> Result:
        return run_rig(*args, cwd=cwd or dev_project, **options)  # type: ignore[arg-type]

    return run


@pytest.fixture
def forked(rig: Rig) -> Rig:
    """The dev project applied, with workspaces dev and dev2."""
    for name in ("dev", "dev2"):
        result = rig("fork", name)
        assert result.returncode == 0, result
    return rig


@pytest.fixture
def started(tmp_path: Path) -> Path:
    """``rig init``'s starter (local provider), applied, with a workspace ``demo``."""
    for argv in (["init"], ["apply"], ["fork", "demo"]):
        done = run_rig(*argv, cwd=tmp_path)
        assert done.returncode == 0, done
    return tmp_path
