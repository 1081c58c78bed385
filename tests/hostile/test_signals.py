"""A terminal's Ctrl-C, SIGTERM or hang-up to rig's whole process group is never a success.

``RIG_HOSTILE_ROUNDS`` rounds (default 1) of every handler kind x signal;
``python3 -m tests.hostile signals --trials 3`` runs the same trials on their own, with figures.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.signals import DOCKER_KIND, HOST_KINDS, SIGNALS, Docker, SignalProject, Unavailable

ROUNDS = int(os.environ.get("RIG_HOSTILE_ROUNDS", "1"))


def _docker() -> Docker:
    try:
        return Docker()
    except Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_DOCKER") == "1":
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def host_project(tmp_path_factory: pytest.TempPathFactory) -> SignalProject:
    return SignalProject(Path(tmp_path_factory.mktemp("hostile-host")))


@pytest.fixture(scope="module")
def docker_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignalProject]:
    docker = _docker()
    project = SignalProject(Path(tmp_path_factory.mktemp("hostile-docker")), docker)
    yield project
    project.close()
    docker.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("round_", range(ROUNDS))
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("kind", HOST_KINDS)
def test_group_signal_during_a_host_command_is_an_interrupt(
    host_project: SignalProject, kind: str, signum: signal.Signals, round_: int
) -> None:
    trial = host_project.trial(kind, signum)
    assert trial.errors == [], trial
    assert trial.exit_code == 128 + signum, trial
    assert trial.status == "interrupted", trial
    assert trial.survivors == [], trial


@pytest.mark.docker
@pytest.mark.timeout(300)
@pytest.mark.parametrize("round_", range(ROUNDS))
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_group_signal_during_a_docker_exec_is_an_interrupt(
    docker_project: SignalProject, signum: signal.Signals, round_: int
) -> None:
    trial = docker_project.trial(DOCKER_KIND, signum)
    assert trial.errors == [], trial
    assert trial.exit_code == 128 + signum, trial
    assert trial.status == "interrupted", trial
    assert trial.survivors == [], trial


@pytest.mark.docker
@pytest.mark.timeout(300)
@pytest.mark.parametrize("recover_with", ["apply", "gc"])
def test_exec_of_a_killed_rig_is_ended_by_the_next_command(docker_project: SignalProject, recover_with: str) -> None:
    trial = docker_project.kill9_exec_trial(recover_with=recover_with)
    assert trial.errors == [], trial
    assert trial.survivors == [], trial
