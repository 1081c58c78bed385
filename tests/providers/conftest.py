"""Fixtures for provider tests: real state storage, captured events, cancellation, a Docker daemon."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness

from rigcli.event_bus import EventBus
from rigcli.events import Event
from rigcli.host import TerminalHost
from rigcli.provider_api import Cancellation, KeyValueStore, ProviderSetup, RuntimeContext
from rigcli.state import HostStorage, create_state_store


class _NoInteractions:
    """Provider tests never present browser interactions; reaching one is a test bug."""

    async def present(self, request: Any) -> Any:
        raise AssertionError(f"unexpected interaction {request!r}")

    def present_blocking(self, request: Any) -> Any:
        raise AssertionError(f"unexpected interaction {request!r}")


MakeHarness = Callable[..., Harness]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def make_harness(project: Path, tmp_path: Path) -> Iterator[MakeHarness]:
    """``make_harness(plugin, config={}, emit=None, interactive=False, workspace=None)``.

    Storage is the real project state database (``.rig/state.sqlite``); each call opens its
    own store, so two harnesses over one project behave like two rig processes.
    """
    stores: list[Any] = []

    def make(
        plugin: Any,
        config: dict[str, Any] | None = None,
        *,
        emit: Callable[[Event], None] | None = None,
        interactive: bool = False,
        workspace: str | None = None,
        node_path: str = "base.install",
    ) -> Harness:
        store = create_state_store(project_dir=project)
        store.sync_schema()
        stores.append(store)
        storage: KeyValueStore = store.provider_storage(plugin.provider_id)
        cancellation = Cancellation()
        host = TerminalHost(interactive=interactive)
        setup = ProviderSetup(
            provider_id=plugin.provider_id,
            config=config or {},
            storage=storage,
            host_storage=HostStorage(plugin.provider_id, tmp_path / "host-storage"),
            local=host,
            project_dir=str(project),
            state_dir=str(project / ".rig"),
            cancellation=cancellation,
        )
        bus = EventBus()
        events: list[Event] = []
        bus.subscribe(emit if emit is not None else events.append)
        context = RuntimeContext(
            provider_name="box",
            node_path=node_path,
            workflow="web",
            emit=bus.emit,
            interaction=_NoInteractions(),
            local=host,
            cancellation=cancellation,
            workspace=workspace,
        )
        controller = plugin.create_provider(setup)
        return Harness(plugin, setup, context, controller, controller.runtime(context), cancellation, bus, events)

    yield make
    for store in stores:
        store.close()


@pytest.fixture
def local(make_harness: MakeHarness) -> Harness:
    from providers.local import plugin

    return make_harness(plugin)


@dataclass(frozen=True)
class DockerDaemon:
    host: str
    image: str
    api: Any  # an httpx.Client on the daemon, for checking what the provider did


@pytest.fixture(scope="session")
def docker_daemon() -> Iterator[DockerDaemon]:
    """A reachable daemon with the test image; skips without one unless RIG_REQUIRE_DOCKER=1 (then fails)."""
    import httpx

    from providers.docker.client import resolve_host

    required = os.environ.get("RIG_REQUIRE_DOCKER") == "1"
    host = resolve_host()
    image = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")

    def unavailable(reason: str) -> None:
        if required:
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)

    if not host.startswith("unix://"):
        unavailable(f"tests only drive unix-socket daemons, and DOCKER_HOST is {host}")
    client = httpx.Client(transport=httpx.HTTPTransport(uds=host[len("unix://") :]), base_url="http://docker")
    try:
        client.get("/version", timeout=5).raise_for_status()
    except (httpx.HTTPError, OSError) as exc:
        client.close()
        unavailable(f"no Docker daemon is reachable at {host} ({exc})")
    if client.get(f"/images/{image}/json").status_code != 200:
        client.close()
        unavailable(f"the test image {image} is missing (build it as .ci/docker.sh does)")
    yield DockerDaemon(host, image, client)
    client.close()


@pytest.fixture
def docker(docker_daemon: DockerDaemon, make_harness: MakeHarness, project: Path) -> Iterator[Harness]:
    """A docker provider harness; every container and snapshot image it made is removed afterwards."""
    from providers.docker import plugin

    harness = make_harness(plugin, {"image": docker_daemon.image})
    yield harness
    api = docker_daemon.api
    labels = f'{{"label": ["rig.project={project}"]}}'
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for snapshot in harness.controller.list_snapshots():
        api.delete(f"/images/{snapshot['image_id']}", params={"force": "true"})
    harness.controller.close()


# -- Docker endpoints ------------------------------------------------------------------------------
# Every test that uses a docker daemon runs once per endpoint: the unix socket, tcp with mutual TLS,
# ssh, and Podman's Docker-compatible service (see docker_endpoints.py). The fixture below takes
# over the name ``docker_daemon`` from the unix-only one above, so the existing docker tests are
# parametrized without being copied.

import docker_endpoints  # noqa: E402 - kept with the fixtures that use it


@pytest.fixture(scope="session")
def docker_daemons() -> Iterator[Callable[[str], docker_endpoints.EndpointDaemon]]:
    """``docker_daemons(endpoint)``: that endpoint's daemon, connected once per session on first use.

    Skips when absent, unless RIG_REQUIRE_DOCKER=1 (RIG_REQUIRE_PODMAN=1 for Podman; then fails).
    """
    image = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
    connected: dict[str, docker_endpoints.EndpointDaemon | str] = {}

    def daemon(endpoint: str) -> docker_endpoints.EndpointDaemon:
        if endpoint not in connected:
            try:
                connected[endpoint] = docker_endpoints.connect(endpoint, image)
            except docker_endpoints.Unavailable as exc:
                connected[endpoint] = str(exc)
        found = connected[endpoint]
        if isinstance(found, str):
            variable = docker_endpoints.required_variable(endpoint)
            if os.environ.get(variable) == "1":
                pytest.fail(f"{variable}=1 but {found}")
            pytest.skip(found)
        return found

    yield daemon
    for found in connected.values():
        if not isinstance(found, str):
            found.api.close()


@pytest.fixture(autouse=True)
def _podman_exec_sessions_reaped(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test on Podman, and after its fixtures removed its containers: no conmon of theirs is left.

    Autouse, so it is set up before the docker fixtures and torn down after them.
    """
    yield
    if "docker_daemon" in request.fixturenames or "docker_on" in request.fixturenames:
        for daemon in docker_endpoints.connected_podman():
            docker_endpoints.reap_podman_exec_sessions(daemon)


@pytest.fixture(scope="session", params=docker_endpoints.ENDPOINTS)
def docker_daemon(  # noqa: F811
    request: pytest.FixtureRequest, docker_daemons: Callable[[str], docker_endpoints.EndpointDaemon]
) -> docker_endpoints.EndpointDaemon:
    """The daemon behind one endpoint, with the test image (each docker test runs once per endpoint)."""
    return docker_daemons(request.param)


@pytest.fixture(autouse=True)
def _docker_endpoint_environment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point DOCKER_HOST/DOCKER_TLS_VERIFY/DOCKER_CERT_PATH at the test's endpoint, as a docker CLI user would.

    Per test rather than per session: a session fixture's environment would leak into other tests.
    """
    if "docker_daemon" in request.fixturenames:
        docker_endpoints.point_environment(monkeypatch, request.getfixturevalue("docker_daemon"))


@pytest.fixture
def docker_on(
    docker_daemons: Callable[[str], docker_endpoints.EndpointDaemon],
    make_harness: MakeHarness,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[[str], Harness]]:
    """``docker_on(endpoint)``: the ``docker`` harness on an endpoint chosen at run time (test_exec's ``box``)."""
    from providers.docker import plugin

    made: list[tuple[Harness, docker_endpoints.EndpointDaemon]] = []

    def make(endpoint: str) -> Harness:
        daemon = docker_daemons(endpoint)
        docker_endpoints.point_environment(monkeypatch, daemon)
        harness = make_harness(plugin, {"image": daemon.image})
        made.append((harness, daemon))
        return harness

    yield make
    for harness, daemon in made:
        docker_endpoints.remove_project_resources(daemon.api, project, harness.controller)


# -- A Docker Swarm cluster ------------------------------------------------------------------------
# Two dockerd nodes in their own network namespaces and a registry, from .ci/swarm.sh. Tests that
# take the ``swarm`` fixture are marked ``swarm`` (``pytest -m swarm`` runs just them).

import swarm_cluster  # noqa: E402 - kept with the fixture that uses it


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "swarm: needs the two-node swarm and registry of .ci/swarm.sh (skips unless RIG_REQUIRE_SWARM=1)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "swarm" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.swarm)


@pytest.fixture(scope="session")
def swarm() -> Iterator[swarm_cluster.SwarmCluster]:
    """The swarm of .ci/swarm.sh; skips when it is not reachable, unless RIG_REQUIRE_SWARM=1 (then fails)."""
    try:
        cluster = swarm_cluster.connect()
    except swarm_cluster.Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_SWARM") == "1":
            pytest.fail(f"RIG_REQUIRE_SWARM=1 but {exc}")
        pytest.skip(str(exc))
    yield cluster
    cluster.close()


@pytest.fixture
def swarm_on(
    swarm: swarm_cluster.SwarmCluster, make_harness: MakeHarness, project: Path
) -> Iterator[Callable[..., Harness]]:
    """``swarm_on(**config)``: the ``swarm`` provider on the test cluster (``config`` on top of its defaults).

    Whatever the project still has on the cluster afterwards (services, task containers, registry
    tags, the nodes' copies of its snapshots) is removed.
    """
    from providers.swarm import plugin

    made: list[Harness] = []

    def make(*, workspace: str | None = None, **config: Any) -> Harness:
        harness = make_harness(plugin, swarm.provider_config(**config), workspace=workspace)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.controller.close()
    swarm.clean(project)
