"""Every wait on a daemon or a registry is bounded: against a peer that accepts and never answers, through `rig`.

Each transport the docker provider speaks — a unix socket (Docker's and Podman's API alike), tcp,
tcp with TLS (a port that accepts and never finishes the handshake) and ssh (a host that accepts
and never sends its banner) — is tried twice: ``rig apply``, whose plan asks over rig's own
connection (rawhttp), and ``rig gc``, which lists what rig made through the httpx client. The
swarm provider's registry is asked through ``rig gc`` too. Bounds are set small through their
variables; each run is held to a generous wall-clock limit by the subprocess's own timeout (a hang
fails the test, a slow machine does not), and the answer is the documented one: one error line
naming the endpoint and the bound, exit 1, nothing left running.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_endpoints import Unavailable, ssh_processes, tls_settings
from e2e_support import copy_example, docker_env, rig_env, rig_within

from tests.silent_peers import Silent

IMAGE = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
BOUNDS = {"RIG_CONNECT_TIMEOUT": "1", "RIG_READ_TIMEOUT": "1", "RIG_CHECK_TIMEOUT": "1"}


def cert_path() -> str:
    """The TLS client certificates .ci/docker-remote.sh made (any valid ones do: nothing ever checks them)."""
    try:
        return tls_settings()[1]
    except Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_DOCKER") == "1":
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {exc}")
        pytest.skip(str(exc))


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    """The run's one stderr line, checked to be an error with exit 1 and no traceback. (An apply fails
    where its task makes the container; the plan's check said the same before.)"""
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def bounded_env(tmp_path: Path, host: str, **more: str) -> dict[str, str]:
    return docker_env(tmp_path, host, IMAGE, **{**BOUNDS, **more})


def no_ssh_left(host: str) -> None:
    deadline = time.monotonic() + 10
    while ssh_processes(host) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ssh_processes(host) == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_example("docker", tmp_path)


@pytest.fixture
def silent_tcp() -> Iterator[Silent]:
    with Silent.tcp() as peer:
        yield peer


def test_a_unix_socket_that_never_answers(tmp_path: Path, project: Path) -> None:
    """The transport of a local Docker daemon and of Podman's service alike."""
    with Silent.unix(tmp_path / "docker.sock") as peer:
        host = f"unix://{tmp_path / 'docker.sock'}"
        env = bounded_env(tmp_path, host)
        applied = one_error(rig_within(project, env, "--json", "apply"))
        listed = one_error(rig_within(project, env, "--json", "gc", "--dry-run"))
        assert peer.accepted >= 2
    at = f"Cannot reach the Docker daemon at {host}"
    assert applied.startswith(f"error: {at}: no answer to GET /images/{IMAGE}/json within 1s (RIG_CHECK_TIMEOUT)")
    assert f"could not list what docker: {at}: no answer to GET /containers/json within 1s (RIG_READ_TIMEOUT)" in listed
    assert "Nothing uncertain was taken as gone" in listed


def test_a_tcp_port_that_never_answers(tmp_path: Path, project: Path, silent_tcp: Silent) -> None:
    host = f"tcp://127.0.0.1:{silent_tcp.port}"
    env = bounded_env(tmp_path, host)
    applied = one_error(rig_within(project, env, "--json", "apply"))
    listed = one_error(rig_within(project, env, "--json", "gc", "--dry-run"))
    at = f"Cannot reach the Docker daemon at {host}"
    assert applied.startswith(f"error: {at}: no answer to GET /images/{IMAGE}/json within 1s (RIG_CHECK_TIMEOUT)")
    assert f"{at}: no answer to GET /containers/json within 1s (RIG_READ_TIMEOUT)" in listed


def test_a_tls_port_that_never_finishes_the_handshake(tmp_path: Path, project: Path, silent_tcp: Silent) -> None:
    host = f"tcp://127.0.0.1:{silent_tcp.port}"
    env = bounded_env(tmp_path, host, DOCKER_TLS_VERIFY="1", DOCKER_CERT_PATH=cert_path())
    applied = one_error(rig_within(project, env, "--json", "apply"))
    listed = one_error(rig_within(project, env, "--json", "gc", "--dry-run"))
    at = f"Cannot reach the Docker daemon at {host}"
    assert applied.startswith(f"error: {at}: no TLS handshake within 1s (RIG_CONNECT_TIMEOUT)")
    assert f"{at}: no TLS connection within 1s (RIG_CONNECT_TIMEOUT)" in listed
    assert silent_tcp.accepted >= 2


def test_an_ssh_host_that_never_answers_is_given_up_at_rigs_read_bound(
    tmp_path: Path, project: Path, silent_tcp: Silent
) -> None:
    """ssh itself would wait its ConnectTimeout (30 s here) for the banner: rig's own bound ends it first."""
    host = f"ssh://rig@127.0.0.1:{silent_tcp.port}"
    env = bounded_env(tmp_path, host, RIG_CONNECT_TIMEOUT="30")
    applied = one_error(rig_within(project, env, "--json", "apply"))
    no_ssh_left(host)
    listed = one_error(rig_within(project, env, "--json", "gc", "--dry-run"))
    no_ssh_left(host)
    at = f"Cannot reach the Docker daemon at {host}"
    assert applied.startswith(f"error: {at}: no answer to GET /images/{IMAGE}/json within 1s (RIG_CHECK_TIMEOUT)")
    assert f"{at}: no answer to GET /containers/json within 1s (RIG_READ_TIMEOUT)" in listed


def test_an_ssh_host_that_never_answers_is_given_up_at_sshs_connect_timeout(
    tmp_path: Path, project: Path, silent_tcp: Silent
) -> None:
    """RIG_CONNECT_TIMEOUT is ssh's ConnectTimeout: ssh gives up on the banner and says so, named with the bound."""
    host = f"ssh://rig@127.0.0.1:{silent_tcp.port}"
    env = bounded_env(tmp_path, host, RIG_READ_TIMEOUT="30", RIG_CHECK_TIMEOUT="30")
    applied = one_error(rig_within(project, env, "--json", "apply"))
    listed = one_error(rig_within(project, env, "--json", "gc", "--dry-run"))
    no_ssh_left(host)
    expected = f"Cannot reach the Docker daemon at {host}: unreachable ("
    assert applied.startswith(f"error: {expected}")
    assert "timed out; ssh's ConnectTimeout is 1s (RIG_CONNECT_TIMEOUT))" in applied
    assert expected in listed and "ssh's ConnectTimeout is 1s (RIG_CONNECT_TIMEOUT)" in listed


def test_a_registry_that_never_answers(tmp_path: Path, silent_tcp: Silent) -> None:
    """The swarm provider's registry client: ``rig gc`` lists the registry's tags, and gets no answer."""
    manager = os.environ.get("RIG_TEST_SWARM_MANAGER")
    if not manager:
        if os.environ.get("RIG_REQUIRE_SWARM") == "1":
            pytest.fail("RIG_REQUIRE_SWARM=1 but RIG_TEST_SWARM_MANAGER is not set (.ci/swarm.sh)")
        pytest.skip("RIG_TEST_SWARM_MANAGER is not set (.ci/swarm.sh)")
    registry = f"127.0.0.1:{silent_tcp.port}"
    env = rig_env(
        tmp_path,
        RIG_SWARM_HOST=manager,
        RIG_SWARM_REGISTRY=registry,
        RIG_SWARM_NODES=os.environ.get("RIG_TEST_SWARM_NODES", "{}"),
        RIG_SWARM_IMAGE=f"{registry}/rig/base:busybox",
        **BOUNDS,
    )
    project = copy_example("swarm", tmp_path)
    done = rig_within(project, env, "--json", "gc", "--dry-run")
    line = one_error(done)
    expected = f"Cannot reach the registry at http://{registry}: no answer to GET /v2/rig/snapshot/tags/list"
    assert f"could not list what swarm: {expected} within 1s (RIG_READ_TIMEOUT)" in line
    assert json.loads(done.stdout)["removed"] == []  # the report, printed whatever happened: nothing taken as gone
