"""The team-scale cases: forking from a Docker daemon's committed image, and state on PostgreSQL."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import statistics
import subprocess
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from benchmarks.cases import CACHED_TASKS, cached_project
from benchmarks.fixtures import DOCKER_CONFIG, Project, base_env, chain_config, python_executable, rig_argv
from benchmarks.measure import Command, Invocation
from benchmarks.postgres_probe import MARKER
from benchmarks.suite import Case, Context, Row, Side, Target

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


def _with_schema(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [(key, value) for key, value in parse_qsl(parts.query) if key not in ("schema", "fragments_schema")]
    query += [("schema", schema), ("fragments_schema", f"{schema}_fragments")]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _drop_schemas(url: str, schema: str) -> None:
    """Best effort: the run's schemas are uniquely named, so leaving them is harmless if psycopg is absent."""
    try:
        import psycopg  # type: ignore[import-not-found]
    except ImportError:
        return
    base = urlunsplit(urlsplit(url)._replace(query=""))
    try:
        with psycopg.connect(base, autocommit=True) as connection:
            for name in (schema, f"{schema}_fragments"):
                connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    except Exception:  # cleanup must never hide the measurement
        return


def run_apply_postgres(ctx: Context, case: Case) -> list[Row]:
    url = os.environ.get("RIG_BENCH_POSTGRES_URL")
    if not url:
        return case.skipped("RIG_BENCH_POSTGRES_URL is not set (a postgresql:// URL to a server on loopback)")
    sqlite = cached_project(ctx, CACHED_TASKS)
    project = Project.create(ctx.root, "postgres-200", chain_config(CACHED_TASKS))
    schema = f"rig_bench_{secrets.token_hex(4)}"
    state = _with_schema(url, schema)
    try:
        probe = project.invocation("--state", state, "--json", "apply")
        done = subprocess.run(
            list(probe.argv),
            cwd=probe.cwd,
            env=probe.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=ctx.timeout,
            check=False,
        )
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()] or ["(no stderr)"]
            return case.skipped(f"rig does not accept a PostgreSQL --state here: {lines[-1].strip()[:160]}")
        rig = Command("rig apply, PostgreSQL", [project.invocation("--state", state, "apply", plain=True)])
        baseline = Command("rig apply, SQLite", [sqlite.invocation("apply", plain=True)])
        row = ctx.compare(case, rig, baseline)
        if row.baseline is not None:
            row.note = _where_the_time_goes(project.invocation("--state", state, "apply", plain=True), row.baseline)
        return [row]
    finally:
        _drop_schemas(url, schema)


def _where_the_time_goes(apply: Invocation, sqlite: Side, runs: int = 5) -> str:
    """The row's note: the medians of what postgres_probe.py reads inside rig, beside the SQLite apply."""
    probe = Path(__file__).with_name("postgres_probe.py")
    argv = [python_executable(), "-I", str(probe), *apply.argv[len(rig_argv()) :]]
    found: list[dict[str, float]] = []
    for _ in range(runs):
        done = subprocess.run(
            argv, cwd=apply.cwd, env=apply.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
        lines = [line for line in done.stderr.splitlines() if line.startswith(MARKER)]
        if done.returncode != 0 or not lines:
            return f"no breakdown: the probe exited {done.returncode}"
        found.append(json.loads(lines[-1][len(MARKER) :]))

    def median(key: str) -> float:
        return statistics.median(item[key] for item in found)

    driver = median("import_ms")
    return (
        f"in rig: psycopg's import {driver:.0f} ms ({driver / 1000 / sqlite.median_s:.2f}× the SQLite apply), "
        f"connecting {median('connect_ms'):.0f} ms, {median('statements'):.0f} statements "
        f"{median('statements_ms'):.0f} ms"
    )


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
    Case(
        "apply-postgres",
        f"no-op `rig apply`, {CACHED_TASKS} cached, PostgreSQL state over loopback",
        "the same on SQLite",
        Target(max_ratio=2),
        run_apply_postgres,
    ),
]

__all__ = ["TEAM_CASES"]
