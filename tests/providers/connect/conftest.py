"""Workspaces reached by the real OpenSSH client: a project per provider, a private HOME and RIG_HOME,
and ssh always run with ``-F`` on what ``rig ssh-config`` printed (never the user's ~/.ssh)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import RIG, env_with_rig, write_project
from tests.providers.docker_endpoints import EndpointDaemon

LOCAL = """
from rigcli import define_provider, workflow

app = workflow("app", providers={"box": define_provider("local")})


def base(step, box):
    machine = box.create_machine()
    machine.exec("echo hello > greeting.txt")
    return {"ctx": {"snap": machine.snapshot_ref()}}


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["snap"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("s").task("base", base).workspace(create=create, remove=remove, ports=[8000])
"""

DOCKER = """
from rigcli import define_provider, env, workflow

IMAGE = env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
app = workflow("box", providers={"box": define_provider("docker", image=IMAGE)})


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("echo hello > /greeting.txt")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("box").task("build", build).workspace(create=create, remove=remove, ports=[80])
"""


def require_tools(*names: str) -> None:
    """Skip without the real OpenSSH tools, unless RIG_REQUIRE_SSH=1 (CI installs them): then fail."""
    missing = [name for name in names if shutil.which(name) is None]
    if missing:
        reason = f"not installed here: {', '.join(missing)}"
        if os.environ.get("RIG_REQUIRE_SSH") == "1":
            pytest.fail(f"RIG_REQUIRE_SSH=1 but {reason}")
        pytest.skip(reason)


@dataclass
class Reached:
    """One forked workspace and how to reach it with ssh."""

    provider: str
    project: Path
    home: Path
    config: Path
    alias: str
    env: dict[str, str]
    declared: int = 0  # the port its workspace() declares
    masters: list[str] = field(default_factory=list)

    def rig(self, *args: str, timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("text", True)
        kwargs.setdefault("env", self.env)
        return subprocess.run([RIG, *args], cwd=self.project, capture_output=True, timeout=timeout, **kwargs)

    def ssh_argv(self, *args: str, tool: str = "ssh") -> list[str]:
        return [tool, "-F", str(self.config), "-o", "BatchMode=yes", *args]

    def ssh(self, *args: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        kwargs.setdefault("capture_output", True)
        return subprocess.run(self.ssh_argv(*args), env=self.env, timeout=timeout, **kwargs)

    def end_masters(self) -> None:
        subprocess.run(self.ssh_argv("-O", "exit", self.alias), env=self.env, capture_output=True, timeout=30)


def _reach(tmp: Path, provider: str, config: str, docker_env: dict[str, str | None] | None = None) -> Iterator[Reached]:
    require_tools("ssh", "scp", "sftp", "curl")
    home = Path(tempfile.mkdtemp(prefix="rig-ssh-", dir="/tmp"))  # short: ssh's control socket path has a limit
    env = env_with_rig({"HOME": str(home), "RIG_HOME": str(home / "rig"), "RIG_NO_BROWSER": "1"})
    for key, value in (docker_env or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    env.pop("XDG_RUNTIME_DIR", None)
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("SSH_AUTH_SOCK", None)
    project = write_project(tmp / "proj", config)
    declared = 8000 if provider == "local" else 80
    reached = Reached(provider, project, home, home / "ssh_config", "dev.proj.rig", env, declared)
    forked = reached.rig("fork", "dev", timeout=300)
    assert forked.returncode == 0, forked.stderr
    printed = reached.rig("ssh-config")
    assert printed.returncode == 0, printed.stderr
    reached.config.write_text(printed.stdout)
    try:
        yield reached
    finally:
        reached.end_masters()
        reached.rig("rm", "dev", "--yes", "--force", timeout=300)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module", params=["local", "docker"])
def reached(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    docker_daemons: Callable[[str], EndpointDaemon],
) -> Iterator[Reached]:
    """Every channel on local and on the docker daemon over its unix socket (the other endpoints: below)."""
    if request.param == "local":
        yield from _reach(tmp_path_factory.mktemp("local"), "local", LOCAL)
        return
    daemon = docker_daemons("unix")
    yield from _reach(tmp_path_factory.mktemp("docker"), "docker", DOCKER, daemon.env)


@pytest.fixture(scope="module", params=["tls", "ssh", "podman"])
def reached_remote(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    docker_daemons: Callable[[str], EndpointDaemon],
) -> Iterator[Reached]:
    """A docker workspace on a daemon over tcp+TLS, over ssh, and on Podman."""
    daemon = docker_daemons(request.param)
    yield from _reach(tmp_path_factory.mktemp(request.param), "docker", DOCKER, daemon.env)


@pytest.fixture(scope="module")
def local_reached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reached]:
    yield from _reach(tmp_path_factory.mktemp("local"), "local", LOCAL)


@pytest.fixture(scope="module")
def docker_reached(
    tmp_path_factory: pytest.TempPathFactory, docker_daemons: Callable[[str], EndpointDaemon]
) -> Iterator[Reached]:
    """A docker workspace alone (what only a container has: stop and start)."""
    yield from _reach(tmp_path_factory.mktemp("docker"), "docker", DOCKER, docker_daemons("unix").env)
