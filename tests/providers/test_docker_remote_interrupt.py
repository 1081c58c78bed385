"""Interrupting ``rig apply`` on each docker endpoint: the exec'd command dies in the container, no ssh survives rig."""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_endpoints import ssh_processes
from e2e_support import RIG, rig_env
from provider_helpers import wait_until

CONFIG = """
from rigcli import define_provider, env, workflow

app = workflow("interrupt", providers={"box": define_provider("docker", image=env("RIG_DOCKER_IMAGE"))})


def long_command(box):
    machine = box.create_machine()
    machine.exec("sleep 600 & echo started; wait", name="long command")


workflows = app.sequence("root").task("run", long_command)
"""


class Interrupted:
    """A ``rig apply`` started in a project whose only task runs a long command in a container."""

    def __init__(self, tmp_path: Path, daemon: Any) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        (self.project / "rig_config.py").write_text(CONFIG)
        self.api = daemon.api
        self.host = daemon.host
        # Every process rig starts inherits this, so its ssh processes can be told from other tests'.
        self.marker = f"RIG_TEST_RUN={secrets.token_hex(8)}"
        key, value = self.marker.split("=")
        env = rig_env(tmp_path, RIG_DOCKER_IMAGE=daemon.image, RIG_RENDER="0", **{key: value})
        env.update({name: value for name, value in daemon.env.items() if value is not None})
        for name in [name for name, value in daemon.env.items() if value is None]:
            env.pop(name, None)
        self.process = subprocess.Popen(
            [RIG, "apply"], cwd=self.project, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def wait_for_output(self, text: str, timeout: float = 60) -> None:
        """Read rig's progress (stderr) until ``text`` appears: the command is then running in the container."""
        assert self.process.stderr is not None
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            seen.append(line)
            if text in line:
                return
        raise AssertionError(f"rig never printed {text!r}; it printed:\n{''.join(seen)}")

    def ssh(self) -> list[int]:
        if not self.host.startswith("ssh://"):
            return []
        found = []
        for pid in ssh_processes(self.host):
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if self.marker.encode() in environ:
                found.append(pid)
        return found

    def container(self) -> str:
        labels = json.dumps({"label": [f"rig.project={self.project}"]})
        [container] = self.api.get("/containers/json", params={"all": "true", "filters": labels}).json()
        return str(container["Id"])

    def processes_in(self, container: str) -> list[str]:
        """Command lines running in the container, asked through the API (the keepalive and init included)."""
        body = {"AttachStdout": True, "Cmd": ["ps", "-o", "args"]}
        created = self.api.post(f"/containers/{container}/exec", json=body).json()
        # A hijacked connection is not reusable (over TLS the daemon only half-closes it).
        output = self.api.post(
            f"/exec/{created['Id']}/start", json={"Detach": False, "Tty": False}, headers={"Connection": "close"}
        ).content
        text = b"".join(_frames(output)).decode()
        return [line.strip() for line in text.splitlines()[1:] if line.strip() and not line.startswith("ps ")]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        labels = json.dumps({"label": [f"rig.project={self.project}"]})
        for container in self.api.get("/containers/json", params={"all": "true", "filters": labels}).json():
            self.api.delete(f"/containers/{container['Id']}", params={"force": "true"})


def _frames(data: bytes) -> Iterator[bytes]:
    while len(data) >= 8:
        size = int.from_bytes(data[4:8], "big")
        yield data[8 : 8 + size]
        data = data[8 + size :]


@pytest.fixture
def interrupted(tmp_path: Path, docker_daemon: Any) -> Iterator[Interrupted]:
    run = Interrupted(tmp_path, docker_daemon)
    yield run
    run.close()


# The container's init is docker-init on Docker Engine, catatonit (as /run/podman-init) on Podman.
KEEPALIVE = {"/sbin/docker-init -- sleep 2147483647", "/run/podman-init -- sleep 2147483647", "sleep 2147483647"}


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_apply_leaves_no_command_in_the_container_and_no_ssh(
    interrupted: Interrupted, signum: signal.Signals, code: int
) -> None:
    interrupted.wait_for_output("started")
    container = interrupted.container()
    # The background sleep may print "started" a moment before it has become `sleep`.
    assert wait_until(lambda: any("sleep 600" in line for line in interrupted.processes_in(container)))
    assert interrupted.ssh() or not interrupted.host.startswith("ssh://"), "the run should be using ssh"
    interrupted.process.send_signal(signum)
    _, stderr = interrupted.process.communicate(timeout=60)
    assert interrupted.process.returncode == code, stderr
    assert stderr.splitlines()[-1] == "error: interrupted"
    assert interrupted.ssh() == [], "an ssh process outlived rig"
    leftovers: list[str] = []

    def only_the_keepalive() -> bool:
        leftovers[:] = [line for line in interrupted.processes_in(container) if line not in KEEPALIVE]
        return not leftovers

    assert wait_until(only_the_keepalive, timeout=10), f"still running in the container: {leftovers}"


@pytest.mark.parametrize("docker_daemon", ["ssh"], indirect=True)  # only ssh starts processes on the client
def test_ssh_dies_with_rig_even_when_rig_is_killed(interrupted: Interrupted) -> None:
    interrupted.wait_for_output("started")
    assert interrupted.ssh()
    interrupted.process.kill()  # SIGKILL: no handler, no atexit; only the kernel can stop ssh now
    interrupted.process.communicate(timeout=60)
    assert wait_until(lambda: not interrupted.ssh(), timeout=10), "ssh outlived a killed rig"
