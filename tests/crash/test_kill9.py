"""kill -9 of `rig fork` and `rig rm` at random instants leaves nothing behind after one rm and gc.

``RIG_CRASH_TRIALS`` trials per provider and command (default 20, as in the default test run; on the
swarm ``RIG_CRASH_SWARM_TRIALS``, default 5: each of its trials makes and removes services and tags);
``python3 -m tests.crash --trials 50`` runs the same trials on their own and prints figures.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crash.harness import OPS, CrashProject, Unavailable, docker_api, swarm_cluster

TRIALS = int(os.environ.get("RIG_CRASH_TRIALS", "20"))
SWARM_TRIALS = int(os.environ.get("RIG_CRASH_SWARM_TRIALS", "5"))
SEED = int(os.environ.get("RIG_CRASH_SEED", str(random.randrange(1 << 30))))


@pytest.fixture(scope="module", params=("local", "docker"))
def crash_project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrashProject]:
    """A project on one provider, applied and calibrated once per test worker."""
    api = None
    if request.param == "docker":
        try:
            api = docker_api()
        except Unavailable as exc:
            if os.environ.get("RIG_REQUIRE_DOCKER") == "1":
                pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {exc}")
            pytest.skip(str(exc))
    project = CrashProject(Path(tmp_path_factory.mktemp(f"crash-{request.param}")), request.param, api)
    yield project
    project.close()
    if api is not None:
        api.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize("op", OPS)
def test_kill9_leaves_nothing_behind(crash_project: CrashProject, op: str, trial: int) -> None:
    result = crash_project.trial(op, trial, random.Random(SEED * 1000 + trial))
    assert result.errors == [], f"seed {SEED}: {result}"
    assert result.leaks == [], f"seed {SEED}: {result}"
    assert result.stuck == [], f"seed {SEED}: {result}"
    assert result.integrity == "ok", f"seed {SEED}: {result}"


@pytest.fixture(scope="module")
def swarm_crash_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrashProject]:
    """A project on the test swarm, applied and calibrated once per test worker."""
    try:
        cluster = swarm_cluster()
    except Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_SWARM") == "1":
            pytest.fail(f"RIG_REQUIRE_SWARM=1 but {exc}")
        pytest.skip(str(exc))
    project = CrashProject(Path(tmp_path_factory.mktemp("crash-swarm")), "swarm", cluster)
    yield project
    project.close()
    cluster.close()


@pytest.mark.swarm
@pytest.mark.timeout(180)
@pytest.mark.parametrize("trial", range(SWARM_TRIALS))
@pytest.mark.parametrize("op", OPS)
def test_kill9_on_the_swarm_leaves_nothing_behind(swarm_crash_project: CrashProject, op: str, trial: int) -> None:
    result = swarm_crash_project.trial(op, trial, random.Random(SEED * 1000 + trial))
    assert result.errors == [], f"seed {SEED}: {result}"
    assert result.leaks == [], f"seed {SEED}: {result}"
    assert result.stuck == [], f"seed {SEED}: {result}"
    assert result.integrity == "ok", f"seed {SEED}: {result}"
