"""``rig init --template docker`` on the real daemon: it applies from a local image and never pulls."""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import run_rig
from tests.providers.conftest import DockerDaemon


def test_the_docker_template_applies_from_a_local_image_and_never_pulls(
    tmp_path: Path, docker_daemon: DockerDaemon
) -> None:
    assert run_rig("init", "--template", "docker", cwd=tmp_path).returncode == 0
    env = {"RIG_DOCKER_IMAGE": docker_daemon.image, "DOCKER_HOST": docker_daemon.host}
    applied = run_rig("apply", cwd=tmp_path, env=env, subprocess=True)
    assert applied.returncode == 0, applied
    assert run_rig("--json", "plan", cwd=tmp_path, env=env).json["cached_node_count"] == 1
    try:
        assert run_rig("fork", "demo", cwd=tmp_path, env=env).returncode == 0
        # rig's own exec (the starter defines none): the program's exit code and its own stdio
        done = run_rig(
            "exec", "demo", "--", "sh", "-c", "cat; exit 7", cwd=tmp_path, env=env, input="in\n", subprocess=True
        )
        assert (done.returncode, done.stdout, done.stderr) == (7, "in\n", ""), done
        shown = run_rig("--json", "op", "demo", "show", cwd=tmp_path, env=env, subprocess=True)
        assert shown.json == {"path": "src/README", "text": "hello from rig\n"}, shown
    finally:
        run_rig("rm", "demo", "--yes", cwd=tmp_path, env=env)

    absent = "rig-test/never-pulled:absent"
    failed = run_rig("apply", cwd=tmp_path, env={**env, "RIG_DOCKER_IMAGE": absent}, subprocess=True)
    assert failed.returncode == 1
    assert "rig never pulls images" in failed.stderr, failed
    assert docker_daemon.api.get(f"/images/{absent}/json").status_code == 404  # still not there
