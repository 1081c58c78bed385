"""The team-scale cases: forking from a Docker daemon's committed image, from a registry on another daemon
(prebuilt_cases), and state on PostgreSQL (postgres_cases)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess

from benchmarks.fixtures import DOCKER_CONFIG, Project, base_env
from benchmarks.measure import Command, Invocation
from benchmarks.postgres_cases import APPLY_POSTGRES
from benchmarks.prebuilt_cases import FORK_PREBUILT
from benchmarks.suite import Case, Context, Row, Target

DEFAULT_IMAGE = "rig/base:busybox"
PROBE_TIMEOUT_S = 20.0


def _docker(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args],
        env=base_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
        check=check,
    )


def docker_unavailable(image: str) -> str | None:
    """Why the docker case cannot run here, or None when it can."""
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        return "no Docker daemon: DOCKER_HOST is not set"
    if shutil.which("docker") is None:
        return "the docker CLI (the baseline) is not on PATH"
    try:
        version = _docker("version", "--format", "{{.Server.Version}}", check=False)
    except subprocess.TimeoutExpired:
        return "the Docker daemon did not answer"
    if version.returncode != 0:
        return f"no Docker daemon reachable at {os.environ.get('DOCKER_HOST', 'the default socket')}"
    if _docker("image", "inspect", image, check=False).returncode != 0:
        return f"image {image} is not on the daemon (rig never pulls; set RIG_BENCH_DOCKER_IMAGE)"
    return None


def _remove_docker_leftovers(label: str) -> None:
    containers = _docker("ps", "-aq", "--filter", f"label={label}", check=False).stdout.split()
    if containers:
        _docker("rm", "-f", *containers, check=False)
    images = _docker("images", "-q", "--filter", f"label={label}", check=False).stdout.split()
    if images:
        _docker("rmi", "-f", *sorted(set(images)), check=False)


def run_fork_docker(ctx: Context, case: Case) -> list[Row]:
    image = os.environ.get("RIG_BENCH_DOCKER_IMAGE") or os.environ.get("RIG_TEST_DOCKER_IMAGE") or DEFAULT_IMAGE
    reason = docker_unavailable(image)
    if reason is not None:
        return case.skipped(reason)
    project = Project.create(ctx.root, "fork-docker", DOCKER_CONFIG, RIG_BENCH_DOCKER_IMAGE=image)
    baseline_name = f"rig-bench-{secrets.token_hex(4)}"
    try:
        committed = json.loads(project.run("--json", "apply"))["context"]["base"]["image_id"]

        def remove_workspace() -> None:
            project.run("rm", "bench", "--yes")

        def remove_container() -> None:
            _docker("rm", "-f", baseline_name)

        rig = Command("rig fork", [project.invocation("fork", "bench")], after=remove_workspace)
        # What rig's docker provider asks the daemon for: init, no network, an idle keep-alive command.
        run = [
            "docker",
            "run",
            "-d",
            "--init",
            "--network",
            "none",
            "--name",
            baseline_name,
            "--label",
            f"rig.project={project.dir}",
            "--entrypoint",
            "sleep",
            committed,
            "2147483647",
        ]
        baseline = Command("docker run -d", [Invocation(run, project.dir, base_env())], after=remove_container)
        return [ctx.compare(case, rig, baseline)]
    finally:
        _remove_docker_leftovers(f"rig.project={project.dir}")


def run_fork_count_docker(ctx: Context, case: Case) -> list[Row]:
    """``rig fork --count 8`` (one apply, the create hooks at once) against eight ``rig fork`` in a row."""
    forks = 8
    image = os.environ.get("RIG_BENCH_DOCKER_IMAGE") or os.environ.get("RIG_TEST_DOCKER_IMAGE") or DEFAULT_IMAGE
    reason = docker_unavailable(image)
    if reason is not None:
        return case.skipped(reason)
    project = Project.create(ctx.root, "fork-count-docker", DOCKER_CONFIG, RIG_BENCH_DOCKER_IMAGE=image)
    try:
        project.run("apply")

        def remove_all() -> None:
            project.run("rm", "--all", "--yes")

        together = Command(
            f"rig fork --count {forks}", [project.invocation("fork", "bench", "--count", str(forks))], after=remove_all
        )
        serial = Command(
            f"{forks} × rig fork in a row",
            [project.invocation("fork", f"bench{index}") for index in range(forks)],
            after=remove_all,
        )
        return [ctx.compare(case, together, serial)]
    finally:
        _remove_docker_leftovers(f"rig.project={project.dir}")


TEAM_CASES = [
    Case(
        "fork-docker",
        "docker `rig fork` from a committed image",
        "`docker run -d --init --network none` of the same image",
        Target(max_ratio=1.5),
        run_fork_docker,
    ),
    Case(
        "fork-count-docker",
        "`rig fork --count 8` (docker)",
        "eight `rig fork` in a row",
        Target(max_ratio=0.5),
        run_fork_count_docker,
    ),
    FORK_PREBUILT,
    APPLY_POSTGRES,
]

__all__ = ["TEAM_CASES"]
