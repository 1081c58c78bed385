"""The cluster cases: forking on a Docker Swarm against `docker service create`, and many forks at once on two nodes.

They need a swarm manager, its nodes' endpoints and a registry, from RIG_BENCH_SWARM_* or the test
cluster's RIG_TEST_SWARM_* variables (``.ci/swarm.sh``): MANAGER, NODES (JSON), REGISTRY, IMAGE.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import textwrap
from dataclasses import dataclass

from benchmarks.fixtures import Project, base_env, rig_argv
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Target, judge

PROBE_TIMEOUT_S = 20.0
FORKS = 8

SWARM_CONFIG = """
    import json
    import os

    from rigcli import define_provider, workflow

    app = workflow(
        "bench",
        providers={
            "box": define_provider(
                "swarm",
                host=os.environ["RIG_BENCH_SWARM_MANAGER"],
                registry=os.environ["RIG_BENCH_SWARM_REGISTRY"],
                nodes=json.loads(os.environ["RIG_BENCH_SWARM_NODES"]),
                image=os.environ["RIG_BENCH_SWARM_IMAGE"],
            )
        },
    )


    def prepare(box):
        machine = box.create_machine()
        try:
            machine.write_text("marker.txt", "prepared\\n")
            return {"ctx": {"base": machine.snapshot_ref()}}
        finally:
            machine.delete()


    def create(workflow, box):
        machine = box.from_snapshot(workflow.ctx["base"])
        return {"machine": machine.id, "service": machine.service_id}


    def remove(workspace, box):
        box.delete_machine(workspace.ctx["machine"])


    workflows = app.sequence("root").task("prepare", prepare).workspace(create=create, remove=remove)
"""

# Wait for the service's task to run, as rig's fork does, without the CLI's stability monitor. $1: the name.
_POLL_RUNNING = textwrap.dedent("""
    set -e
    name=$1
    shift
    docker service create --quiet --detach "$@" >/dev/null
    until docker service ps --filter desired-state=running --format '{{.CurrentState}}' "$name" | grep -q Running
    do sleep 0.05; done
""")


@dataclass(frozen=True)
class Cluster:
    manager: str
    nodes: str  # JSON
    registry: str
    image: str

    def env(self) -> dict[str, str]:
        return {
            "RIG_BENCH_SWARM_MANAGER": self.manager,
            "RIG_BENCH_SWARM_NODES": self.nodes,
            "RIG_BENCH_SWARM_REGISTRY": self.registry,
            "RIG_BENCH_SWARM_IMAGE": self.image,
        }

    def docker_env(self) -> dict[str, str]:
        env = base_env()
        env.update({"DOCKER_HOST": self.manager, "DOCKER_TLS_VERIFY": "", "DOCKER_CERT_PATH": ""})
        return env

    def docker(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", *args],
            env=self.docker_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )


def find_cluster() -> Cluster | str:
    """The cluster to measure on, or why there is none."""
    values = {}
    for name in ("MANAGER", "NODES", "REGISTRY", "IMAGE"):
        value = os.environ.get(f"RIG_BENCH_SWARM_{name}") or os.environ.get(f"RIG_TEST_SWARM_{name}")
        if not value:
            return f"RIG_BENCH_SWARM_{name} (or RIG_TEST_SWARM_{name}, from .ci/swarm.sh) is not set"
        values[name.lower()] = value
    cluster = Cluster(**values)
    if shutil.which("docker") is None:
        return "the docker CLI (the baseline) is not on PATH"
    try:
        info = cluster.docker("info", "--format", "{{.Swarm.ControlAvailable}}")
    except subprocess.TimeoutExpired:
        return f"the swarm manager at {cluster.manager} did not answer"
    if info.stdout.strip() != "true":
        return f"{cluster.manager} is not a swarm manager"
    return cluster


def _service_args(name: str, project: Project, image: str) -> list[str]:
    """What rig's swarm provider asks the manager for: one replica kept idle, dnsrr, no restart, init."""
    return [
        "--name",
        name,
        "--no-resolve-image",
        "--endpoint-mode",
        "dnsrr",
        "--restart-condition",
        "none",
        "--init",
        "--stop-grace-period",
        "0s",
        "--label",
        f"rig.project={project.dir}",
        "--entrypoint",
        "sleep",
        image,
        "2147483647",
    ]


def _remove_leftovers(cluster: Cluster, project: Project) -> None:
    services = cluster.docker("service", "ls", "-q", "--filter", f"label=rig.project={project.dir}").stdout.split()
    if services:
        cluster.docker("service", "rm", *services)


def _prepared(ctx: Context, name: str, cluster: Cluster) -> tuple[Project, str]:
    project = Project.create(ctx.root, name, SWARM_CONFIG, **cluster.env())
    ctx.log("  building the snapshot on the cluster (a service, committed on its node, pushed)")
    image = json.loads(project.run("--json", "apply"))["context"]["base"]["image"]
    return project, image


def run_fork_swarm(ctx: Context, case: Case) -> list[Row]:
    cluster = find_cluster()
    if isinstance(cluster, str):
        return case.skipped(cluster)
    project, image = _prepared(ctx, "fork-swarm", cluster)
    name = f"rig-bench-{secrets.token_hex(4)}"
    try:

        def remove_workspace() -> None:
            project.run("rm", "bench", "--yes")

        def remove_service() -> None:
            cluster.docker("service", "rm", name)

        rig = Command("rig fork", [project.invocation("fork", "bench")], after=remove_workspace)
        env = cluster.docker_env()
        create = ["docker", "service", "create", "--quiet", "--detach=false", *_service_args(name, project, image)]
        baseline = Command(
            "docker service create --detach=false",
            [Invocation(create, project.dir, env)],
            after=remove_service,
        )
        polled = Command(
            "docker service create --detach + poll until running",
            [
                Invocation(
                    ["sh", "-c", _POLL_RUNNING, "sh", name, *_service_args(name, project, image)], project.dir, env
                )
            ],
            after=remove_service,
        )
        rig_series, baseline_series, polled_series = ctx.measure([rig, baseline, polled])
        row = judge(case.row(), rig_series, baseline_series)
        fair = case.row(
            title="swarm `rig fork` from a pushed snapshot, against the task running",
            baseline_title="`docker service create --detach` of the same, polled until its task runs",
        )
        # Informational, no target: the CLI's own time to a running task, without its stability monitor.
        fair.target = Target()
        fair = judge(fair, rig_series, polled_series)
        if row.baseline is not None and fair.baseline is not None:
            wait = row.baseline.median_s - fair.baseline.median_s
            row.note = f"--detach=false spends ~{wait:.1f} s after the task runs watching it stay up (next row)"
        return [row, fair]
    finally:
        _remove_leftovers(cluster, project)
        project.run("cache", "clear", "--yes")
        project.run("gc")


def _count_supported() -> bool:
    done = subprocess.run([*rig_argv(), "fork", "--help"], capture_output=True, text=True, env=base_env(), check=False)
    return "--count" in done.stdout


def run_fork_swarm_many(ctx: Context, case: Case) -> list[Row]:
    cluster = find_cluster()
    if isinstance(cluster, str):
        return case.skipped(cluster)
    project, _ = _prepared(ctx, "fork-swarm-many", cluster)
    try:

        def remove_all() -> None:
            project.run("rm", "--all", "--yes")

        one_by_one = [project.invocation("fork", f"bench{index}") for index in range(1, FORKS + 1)]
        if _count_supported():
            together = Command(
                f"rig fork --count {FORKS}",
                [project.invocation("fork", "bench", "--count", str(FORKS))],
                after=remove_all,
            )
            note = ""
        else:
            together = Command(f"{FORKS} × rig fork at once", one_by_one, concurrent=True, after=remove_all)
            note = f"`rig fork --count` is not there yet: {FORKS} `rig fork` processes at once instead"
        serial = Command(f"{FORKS} × rig fork in a row", one_by_one, after=remove_all)
        row = ctx.compare(case, together, serial)
        if note:
            row.note = f"{row.note}; {note}" if row.note else note
        return [row]
    finally:
        _remove_leftovers(cluster, project)
        project.run("cache", "clear", "--yes")
        project.run("gc")


SWARM_CASES = [
    Case(
        "fork-swarm",
        "swarm `rig fork` from a pushed snapshot",
        "`docker service create --detach=false --no-resolve-image` of the same image, same placement",
        Target(max_ratio=1.5),
        run_fork_swarm,
    ),
    Case(
        "fork-swarm-count",
        f"`rig fork --count {FORKS}` on the two-node swarm",
        f"{FORKS} × `rig fork` in a row",
        Target(max_ratio=0.6),
        run_fork_swarm_many,
    ),
]

__all__ = ["SWARM_CASES", "find_cluster"]
