"""Shared pieces of the end-to-end tests: example projects in a temp dir, the rig CLI, the engine."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.cli.cli_support import RIG

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def copy_example(name: str, target: Path) -> Path:
    project = target / name
    shutil.copytree(EXAMPLES / name, project, ignore=shutil.ignore_patterns(".rig", "__pycache__"))
    return project


def rig_env(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("RIG_")}
    env.update(
        {
            "RIG_HOME": str(home / "rig-home"),
            "RIG_HOST_STORAGE_DIR": str(home / "host-storage"),
            "RIG_RENDER": "0",
            "RIG_NO_BROWSER": "1",
            "NO_COLOR": "1",
        }
    )
    env.update(extra)
    return env


class Rig:
    """Runs ``rig --json ...`` in a project, as a user would, and parses its one JSON document."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project = project
        self.env = env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [RIG, *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if check:
            assert done.returncode == 0, f"rig {' '.join(args)} exited {done.returncode}: {done.stderr}"
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run("--json", *args).stdout)


WALL_SECONDS = 60  # what a run against a peer that never answers may take: far above any bound a test sets


def rig_within(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``rig ARGS`` held to WALL_SECONDS by the subprocess's own timeout: a hang fails, a slow machine does not."""
    return subprocess.run(
        [RIG, *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WALL_SECONDS,
    )


def docker_env(home: Path, host: str, image: str, **more: str) -> dict[str, str]:
    """``rig_env`` on the daemon at ``host`` (no TLS or context but what ``more`` says); the image as both
    examples and test configs name it (RIG_DOCKER_IMAGE, RIG_CHECK_IMAGE)."""
    env = rig_env(home, RIG_DOCKER_IMAGE=image, RIG_CHECK_IMAGE=image)
    for key in ("DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT"):
        env.pop(key, None)
    env.update(DOCKER_HOST=host, **more)
    return env


def statuses(plan: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {node["path"]: (node["status"], node["reason"]["code"]) for node in plan["nodes"]}


def with_engine(project: Path, env: dict[str, str], body: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run ``body(engine)`` against a loaded engine for ``project`` under ``env``."""
    from rigcli.engine import create_engine
    from rigcli.host import TerminalHost

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:

        async def main() -> Any:
            engine = create_engine(
                project, local=TerminalHost(interactive=False), host_storage_dir=env["RIG_HOST_STORAGE_DIR"]
            )
            await engine.load()
            try:
                return await body(engine)
            finally:
                engine.close()

        return asyncio.run(main())
    finally:
        os.environ.clear()
        os.environ.update(saved)


def provider_storage(project: Path, provider_id: str) -> Any:
    """The provider's records in the project state, read directly (not through rig)."""
    from rigcli.state import create_state_store

    store = create_state_store(project_dir=project)
    store.sync_schema()
    return store, store.provider_storage(provider_id)
