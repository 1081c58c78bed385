"""The dev container case: the second `rig fork` of a configuration whose onCreateCommand takes 3 s,
against the reference CLI's `devcontainer up` of a new container from the same configuration, its
image already built (the case's warm-up builds it; each run's container is removed after it)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from benchmarks.fixtures import REPO_ROOT, Project, base_env, run_checked
from benchmarks.measure import Command, Invocation
from benchmarks.suite import Case, Context, Row, Target
from benchmarks.team_cases import DEFAULT_IMAGE, _docker, _remove_docker_leftovers, docker_unavailable

CONFIG = {
    "name": "bench",
    "build": {"dockerfile": "Dockerfile"},
    "onCreateCommand": "sleep 3",
}


def reference_cli() -> str | None:
    """The pinned reference CLI (RIG_DEVCONTAINER_CLI, else where .ci/run installs it), or None."""
    for candidate in (
        os.environ.get("RIG_DEVCONTAINER_CLI", ""),
        str(REPO_ROOT / ".ci/devcontainer-cli/node_modules/.bin/devcontainer"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _configured(folder: Path, image: str) -> Path:
    (folder / ".devcontainer").mkdir(parents=True)
    (folder / ".devcontainer/devcontainer.json").write_text(json.dumps(CONFIG))
    (folder / ".devcontainer/Dockerfile").write_text(f"FROM {image}\nRUN echo built > /built\n")
    (folder / "README.md").write_text("a project\n")
    return folder


def run_devcontainer_fork(ctx: Context, case: Case) -> list[Row]:
    image = os.environ.get("RIG_BENCH_DOCKER_IMAGE") or os.environ.get("RIG_TEST_DOCKER_IMAGE") or DEFAULT_IMAGE
    reason = docker_unavailable(image)
    cli = reference_cli()
    if reason is None and cli is None:
        reason = "the reference dev containers CLI is not installed (.ci/run installs it; or set RIG_DEVCONTAINER_CLI)"
    if reason is not None:
        return case.skipped(reason)
    assert cli is not None
    # Zero config: the directory holds only the dev container configuration (no rig_config.py).
    project = Project(_configured(ctx.root / "devcontainer-rig", image), base_env())
    project.env.update({"RIG_HOME": str(project.dir / "_home"), "RIG_HOST_STORAGE_DIR": str(project.dir / "_home/p")})
    reference = _configured(ctx.root / "devcontainer-reference", image)
    label = f"devcontainer.local_folder={reference}"
    env = {**base_env(), "HOME": str(ctx.root / "devcontainer-home")}
    up = Invocation([cli, "up", "--workspace-folder", str(reference)], reference, env)
    try:
        ctx.log("  preparing: rig apply, and the reference's image")
        project.run("apply")
        run_checked(up)  # builds the image; every timed run makes a new container from it
        _remove_docker_leftovers(label)

        def remove_workspace() -> None:
            project.run("rm", "bench", "--yes")

        rig = Command("rig fork (second)", [project.invocation("fork", "bench")], after=remove_workspace)
        baseline = Command("devcontainer up", [up], after=lambda: _remove_docker_leftovers(label))
        return [ctx.compare(case, rig, baseline)]
    finally:
        _remove_docker_leftovers(f"rig.project={project.dir}")
        _remove_docker_leftovers(label)
        tags = _docker("images", "--format", "{{.Repository}}", check=False).stdout.split()
        built = sorted({tag for tag in tags if tag.startswith(f"vsc-{reference.name}-")})
        if built:
            _docker("rmi", "-f", *built, check=False)
        shutil.rmtree(ctx.root / "devcontainer-home", ignore_errors=True)


DEVCONTAINER_CASES = [
    Case(
        "devcontainer-fork",
        "the second `rig fork` of a devcontainer.json whose onCreateCommand takes 3 s",
        "`devcontainer up` of a new container from the same config (image built)",
        Target(max_ratio=0.2),
        run_devcontainer_fork,
    ),
]

__all__ = ["DEVCONTAINER_CASES"]
