"""Fixtures for provider tests: real state storage, captured events, cancellation, a Docker daemon."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness

from rigcli.events import Event, EventBus
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
        plugin: Any, config: dict[str, Any] | None = None, *, emit: Callable[[Event], None] | None = None,
        interactive: bool = False, workspace: str | None = None, node_path: str = "base.install",
    ) -> Harness:
        store = create_state_store(project_dir=project)
        store.sync_schema()
        stores.append(store)
        storage: KeyValueStore = store.provider_storage(plugin.provider_id)
        cancellation = Cancellation()
        host = TerminalHost(interactive=interactive)
        setup = ProviderSetup(
            provider_id=plugin.provider_id, config=config or {}, storage=storage,
            host_storage=HostStorage(plugin.provider_id, tmp_path / "host-storage"), local=host,
            project_dir=str(project), state_dir=str(project / ".rig"), cancellation=cancellation,
        )
        bus = EventBus()
        events: list[Event] = []
        bus.subscribe(emit if emit is not None else events.append)
        context = RuntimeContext(
            provider_name="box", node_path=node_path, workflow="web", emit=bus.emit,
            interaction=_NoInteractions(), local=host, cancellation=cancellation, workspace=workspace,
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
    client = httpx.Client(transport=httpx.HTTPTransport(uds=host[len("unix://"):]), base_url="http://docker")
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
