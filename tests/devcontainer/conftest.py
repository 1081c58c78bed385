"""Fixtures of the dev container tests: the test daemon and a project that is cleaned up after."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.devcontainer.dc_support import Rig, docker_api, remove_made_for, write_project


@pytest.fixture(scope="session")
def daemon() -> Iterator[httpx.Client]:
    yield from docker_api()


MakeProject = Callable[..., Rig]


@pytest.fixture
def make_project(daemon: httpx.Client, tmp_path: Path) -> Iterator[MakeProject]:
    """``make_project(config, files={}, name="proj")``: a project and its rig; what rig made is removed after."""
    made: list[Path] = []

    def make(config: Any, files: dict[str, str] | None = None, name: str = "proj") -> Rig:
        project = write_project(tmp_path / name, config, files)
        made.append(project)
        return Rig(project, tmp_path / f"{name}-home")

    yield make
    for project in made:
        remove_made_for(daemon, project)
