"""The day-two cases on a Docker daemon: a command run inside a workspace, and `rig ls` with live status."""

from __future__ import annotations

import json
import os

from benchmarks.fixtures import DOCKER_CONFIG, Project, base_env
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Target
from benchmarks.team_cases import DEFAULT_IMAGE, _remove_docker_leftovers, docker_unavailable

LS_WORKSPACES = 50


def _docker_project(ctx: Context, case: Case, name: str) -> Project | list[Row]:
    """The docker fixture project, applied; the case's skipped row when no daemon can run it."""
    image = os.environ.get("RIG_BENCH_DOCKER_IMAGE") or os.environ.get("RIG_TEST_DOCKER_IMAGE") or DEFAULT_IMAGE
    reason = docker_unavailable(image)
    if reason is not None:
        return case.skipped(reason)
    project = Project.create(ctx.root, name, DOCKER_CONFIG, RIG_BENCH_DOCKER_IMAGE=image)
    project.run("--json", "apply")
    return project


def run_exec_docker(ctx: Context, case: Case) -> list[Row]:
    project = _docker_project(ctx, case, "exec-docker")
    if isinstance(project, list):
        return project
    try:
        container = json.loads(project.run("--json", "fork", "bench"))["ctx"]["container"]
        rig = Command("rig exec", [project.invocation("exec", "bench", "--", "true")])
        baseline = Command("docker exec", [Invocation(["docker", "exec", container, "true"], project.dir, base_env())])
        return [ctx.compare(case, rig, baseline)]
    finally:
        _remove_docker_leftovers(f"rig.project={project.dir}")


def run_ls_docker(ctx: Context, case: Case) -> list[Row]:
    project = _docker_project(ctx, case, "ls-docker")
    if isinstance(project, list):
        return project
    count = ctx.size(LS_WORKSPACES, 5)
    try:
        ctx.log(f"  forking {count} docker workspaces")
        for index in range(count):
            project.run("fork", f"ws-{index:02d}")
        probed = json.loads(project.run("--json", "ls"))["workflows"][0]["workspaces"]
        running = sum(1 for item in probed if (item.get("live") or {}).get("state") == "running")
        if running != count:
            return [case.row(status="fail", note=f"only {running} of {count} workspaces probed running")]
        rig = Command("rig ls", [project.invocation("ls", plain=True)])
        label = f"label=rig.project={project.dir}"
        baseline = Command(
            "docker ps -a", [Invocation(["docker", "ps", "-a", "--filter", label], project.dir, base_env())]
        )
        return [ctx.compare(case, rig, baseline, title=f"`rig ls` probing {count} docker workspaces, piped")]
    finally:
        _remove_docker_leftovers(f"rig.project={project.dir}")


DAY_TWO_CASES = [
    Case(
        "exec-docker",
        "`rig exec WS -- true` in a docker workspace",
        "`docker exec CID true`",
        Target(max_ratio=1.5),
        run_exec_docker,
    ),
    Case(
        "ls-docker",
        f"`rig ls` with live status of {LS_WORKSPACES} docker workspaces, piped",
        "`docker ps -a --filter label=rig.project=…`",
        Target(max_ratio=2),
        run_ls_docker,
    ),
]

__all__ = ["DAY_TWO_CASES"]
