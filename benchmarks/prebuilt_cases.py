"""The prebuild row: `rig fork` on a second Docker daemon lacking the snapshot vs `docker pull` + `docker run -d`.

One apply on daemon A (``DOCKER_HOST``) pushes the snapshot to a registry; both sides then start a
workspace from it on daemon B, which has to pull it first: rig through its cached run (the
provider's identity is the registry, so B's plan is all cached), the baseline with the docker CLI.
B is ``RIG_BENCH_DOCKER_B_HOST`` with the client certificates in ``RIG_BENCH_DOCKER_B_CERT_PATH``
(mutual TLS), or the TLS daemon ``.ci/docker-remote.sh`` starts (``RIG_TEST_DOCKER_TLS_HOST``,
``RIG_TEST_DOCKER_CERT_PATH``). The registry is ``RIG_BENCH_REGISTRY`` (``host:port``, reachable from
both daemons), otherwise a private ``docker-registry`` on loopback that the run starts and stops by
PID, as the tests start theirs (``tests/providers/registry_server.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.fixtures import DOCKER_CONFIG, Project, base_env
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Target

PROBE_TIMEOUT_S = 20.0
PULL_TIMEOUT_S = 120.0
# The bench project's docker provider, sharing its snapshots through the registry.
PREBUILT_CONFIG = DOCKER_CONFIG.replace(
    'image=env("RIG_BENCH_DOCKER_IMAGE")', 'image=env("RIG_BENCH_DOCKER_IMAGE"), registry=env("RIG_BENCH_REGISTRY")'
)
assert PREBUILT_CONFIG != DOCKER_CONFIG, "DOCKER_CONFIG no longer names its image as this module expects"


class Unavailable(Exception):
    """This row cannot be measured here; the message says why."""


@dataclass(frozen=True)
class Daemon:
    """A Docker daemon as the docker CLI and rig reach it: the variables that point at it."""

    env: dict[str, str]

    @classmethod
    def local(cls) -> Daemon:
        host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        return cls({**base_env(), "DOCKER_HOST": host, "DOCKER_TLS_VERIFY": "", "DOCKER_CERT_PATH": ""})

    @classmethod
    def second(cls) -> Daemon:
        host = os.environ.get("RIG_BENCH_DOCKER_B_HOST") or os.environ.get("RIG_TEST_DOCKER_TLS_HOST")
        certs = os.environ.get("RIG_BENCH_DOCKER_B_CERT_PATH") or os.environ.get("RIG_TEST_DOCKER_CERT_PATH")
        if not host or not certs:
            raise Unavailable(
                "no second daemon: RIG_BENCH_DOCKER_B_HOST and RIG_BENCH_DOCKER_B_CERT_PATH (or "
                "RIG_TEST_DOCKER_TLS_HOST and RIG_TEST_DOCKER_CERT_PATH, from .ci/docker-remote.sh) are not set"
            )
        if host == os.environ.get("DOCKER_HOST"):
            raise Unavailable(f"the second daemon {host} is DOCKER_HOST itself")
        return cls({**base_env(), "DOCKER_HOST": host, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certs})

    @property
    def host(self) -> str:
        return self.env["DOCKER_HOST"]

    def docker(self, *args: str, timeout: float = PROBE_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def check(self) -> None:
        try:
            answered = self.docker("version", "--format", "{{.Server.Version}}").returncode == 0
        except subprocess.TimeoutExpired:
            answered = False
        if not answered:
            raise Unavailable(f"no Docker daemon answers at {self.host}")

    def has(self, image: str) -> bool:
        return self.docker("image", "inspect", image).returncode == 0

    def remove_labelled(self, label: str) -> None:
        containers = self.docker("ps", "-aq", "--filter", f"label={label}").stdout.split()
        if containers:
            self.docker("rm", "-f", *containers)
        images = self.docker("images", "-q", "--filter", f"label={label}").stdout.split()
        if images:
            self.docker("rmi", "-f", *sorted(set(images)))


@contextlib.contextmanager
def registry_name() -> Iterator[str]:
    """``RIG_BENCH_REGISTRY``, or a private registry's ``127.0.0.1:<port>`` for as long as the block runs."""
    given = os.environ.get("RIG_BENCH_REGISTRY")
    if given:
        yield given
        return
    from tests.providers import registry_server  # a test helper: imported only when a run needs it

    with tempfile.TemporaryDirectory(prefix="rig-bench-registry-") as root:
        try:
            registry = registry_server.start(Path(root) / "registry")
        except registry_server.Unavailable as missing:
            raise Unavailable(
                f"RIG_BENCH_REGISTRY is not set, and no private registry could start: {missing}"
            ) from None
        try:
            yield registry.name
        finally:
            registry.stop()


def run_fork_prebuilt(ctx: Context, case: Case) -> list[Row]:
    image = os.environ.get("RIG_BENCH_DOCKER_IMAGE") or os.environ.get("RIG_TEST_DOCKER_IMAGE") or "rig/base:busybox"
    try:
        a, b = Daemon.local(), Daemon.second()
        a.check()
        if not a.has(image):
            raise Unavailable(f"image {image} is not on {a.host} (rig never pulls it; set RIG_BENCH_DOCKER_IMAGE)")
        b.check()
        with registry_name() as registry:
            return [_measure(ctx, case, a, b, image, registry)]
    except Unavailable as missing:
        return case.skipped(str(missing))


def _measure(ctx: Context, case: Case, a: Daemon, b: Daemon, image: str, registry: str) -> Row:
    on_b = {key: b.env[key] for key in ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH")}
    on_a = {key: a.env[key] for key in on_b}
    project = Project.create(
        ctx.root, "fork-prebuilt", PREBUILT_CONFIG, RIG_BENCH_DOCKER_IMAGE=image, RIG_BENCH_REGISTRY=registry, **on_b
    )
    label = f"rig.project={project.dir}"
    try:
        ctx.log(f"  applying on {a.host}, pushing the snapshot to {registry}")
        snapshot = json.loads(project.run("--json", "apply", **on_a))["context"]["base"]
        shared, image_id = snapshot["image"], snapshot["image_id"]
        if b.has(image_id):
            return case.row(status="fail", note=f"{b.host} had the snapshot before the first fork")
        baseline_name = f"rig-bench-{secrets.token_hex(4)}"

        def forget_workspace() -> None:  # and the pulled image, so that every fork pulls it again
            project.run("rm", "bench", "--yes")
            b.docker("rmi", "-f", image_id)

        def forget_container() -> None:
            b.docker("rm", "-f", baseline_name)
            b.docker("rmi", "-f", image_id)

        rig = Command("rig fork", [project.invocation("fork", "bench")], after=forget_workspace)
        # What rig's docker provider asks the daemon for: init, no network, an idle keep-alive command.
        run = ["docker", "run", "-d", "--init", "--network", "none", "--name", baseline_name]
        run += ["--label", label, "--entrypoint", "sleep", shared, "2147483647"]
        pull_and_run = [Invocation(["docker", "pull", shared], project.dir, b.env), Invocation(run, project.dir, b.env)]
        baseline = Command("docker pull + docker run -d", pull_and_run, after=forget_container)
        return ctx.compare(case, rig, baseline)
    finally:
        project.run("rm", "--all", "--yes", "--force")
        b.remove_labelled(label)
        project.run("cache", "clear", "--yes")
        project.run("gc")  # the registry's manifests, when it is not a private one that goes with the run
        a.remove_labelled(label)


FORK_PREBUILT = Case(
    "fork-prebuilt",
    "docker `rig fork` on a second daemon, its snapshot pulled from the registry",
    "`docker pull` of the snapshot + `docker run -d --init --network none` of it, on that daemon",
    Target(max_ratio=1.3),
    run_fork_prebuilt,
)

__all__ = ["FORK_PREBUILT"]
