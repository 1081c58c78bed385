"""The swarm provider's config: the registry, node endpoints, compose-shaped resources, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from providers.swarm.config import parse_config, parse_memory, parse_registry, parse_resources
from rigcli.errors import ProviderError

BASE = {"registry": "registry.example:5000", "host": "unix:///run/manager.sock"}


@pytest.mark.parametrize(
    ("value", "name", "url"),
    [
        ("registry.example:5000", "registry.example:5000", "https://registry.example:5000"),
        ("Registry.Example", "registry.example", "https://registry.example"),
        ("127.0.0.1:5000", "127.0.0.1:5000", "http://127.0.0.1:5000"),  # loopback: plain HTTP, as dockerd allows
        ("localhost:5000", "localhost:5000", "http://localhost:5000"),
        ("[::1]:5000", "[::1]:5000", "http://[::1]:5000"),
        ("http://registry.lan:5000/", "registry.lan:5000", "http://registry.lan:5000"),
        ("https://127.0.0.1:5000", "127.0.0.1:5000", "https://127.0.0.1:5000"),
    ],
)
def test_the_registry_is_a_name_images_start_with_and_a_url_rig_asks(value: str, name: str, url: str) -> None:
    registry = parse_registry(value)
    assert (registry.name, registry.url) == (name, url)
    assert registry.names(f"{name}/rig/snapshot:x") and not registry.names(f"{name}x/rig/snapshot:x")


@pytest.mark.parametrize("value", [None, "", "ftp://r:1", "r:5000/path", "r:port", 5000])
def test_a_missing_or_malformed_registry_is_a_clear_error(value: Any) -> None:
    with pytest.raises(ProviderError, match="swarm provider config registry="):
        parse_registry(value)


@pytest.mark.parametrize(
    ("text", "size"),
    [("512M", 512 << 20), ("512m", 512 << 20), ("1.5g", 3 << 29), ("100k", 100 << 10), ("2GiB", 2 << 30), (4096, 4096)],
)
def test_memory_sizes_read_as_compose_reads_them(text: Any, size: int) -> None:
    assert parse_memory(text, "memory") == size


def test_resources_become_the_apis_reservations_and_limits() -> None:
    resources = {"reservations": {"cpus": "0.5", "memory": "512M"}, "limits": {"cpus": 2, "memory": "1G", "pids": 100}}
    assert parse_resources(resources) == {
        "Reservations": {"NanoCPUs": 500_000_000, "MemoryBytes": 512 << 20},
        "Limits": {"NanoCPUs": 2_000_000_000, "MemoryBytes": 1 << 30, "Pids": 100},
    }


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"reservation": {}}, "use reservations and limits"),
        ({"reservations": {"gpus": 1}}, "resources.reservations.gpus is not supported"),
        ({"reservations": {"pids": 10}}, "resources.reservations.pids is not supported"),
        ({"limits": {"cpus": "lots"}}, "resources.limits.cpus must be a positive number"),
        ({"limits": {"cpus": 0}}, "resources.limits.cpus must be a positive number"),
        ({"limits": {"memory": "512 parsecs"}}, "resources.limits.memory must be a size"),
        ({"limits": {"pids": True}}, "resources.limits.pids must be a positive whole number"),
        ("0.5 cpus", "must be a mapping like compose's deploy.resources"),
    ],
)
def test_resources_rig_cannot_pass_on_are_refused(resources: Any, message: str) -> None:
    with pytest.raises(ProviderError, match=message):
        parse_resources(resources)


def test_nodes_are_endpoints_sharing_the_managers_tls_settings_unless_given_their_own(tmp_path: Any) -> None:
    config = {
        **BASE,
        "tls_verify": True,
        "cert_path": str(tmp_path / "certs"),
        "nodes": {
            "node-a": "tcp://10.0.0.1:2376",
            "10.0.0.2": {"host": "tcp://10.0.0.2:2375", "tls_verify": False},
            "node-c": "ssh://me@node-c",
            "node-d": "unix:///run/node-d.sock",
        },
    }
    nodes = parse_config(config).nodes
    assert (nodes["node-a"].mode, nodes["node-a"].cert_path) == ("tls", str(tmp_path / "certs"))
    assert (nodes["10.0.0.2"].host, nodes["10.0.0.2"].mode) == ("tcp://10.0.0.2:2375", "tcp")
    assert (nodes["node-c"].host, nodes["node-c"].mode) == ("ssh://me@node-c", "ssh")
    assert nodes["node-d"].mode == "unix"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"nodes": ["a"]}, "nodes= must map node names or addresses"),
        ({"nodes": {"a": 1}}, r"nodes\['a'\] must be a Docker host"),
        ({"nodes": {"a": "ftp://a"}}, "is not supported by the docker provider"),
        ({"constraints": "node.role==worker"}, "constraints= must be a list of strings"),
        ({"networks": [1]}, "networks= must be a list of strings"),
        ({"workdir": "work"}, "workdir= must be an absolute path"),
        ({"start_timeout": 0}, "start_timeout= must be a positive number"),
        ({"image": "busybox"}, 'swarm image "busybox" is not in the configured registry registry.example:5000'),
        ({"image": 3}, "image= must be an image reference"),
    ],
)
def test_config_mistakes_are_one_clear_line(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ProviderError, match=message):
        parse_config({**BASE, **extra})


def test_an_image_from_another_registry_gets_the_name_to_push_it_under() -> None:
    with pytest.raises(ProviderError) as refused:
        parse_config({**BASE, "image": "docker.io/library/busybox:1.36"})
    expected = "docker tag docker.io/library/busybox:1.36 registry.example:5000/library/busybox:1.36"
    assert expected in str(refused.value)
    assert parse_config({**BASE, "image": "registry.example:5000/rig/base:busybox"}).image


def test_a_manager_speaking_an_api_before_1_30_is_refused_it_would_resolve_images() -> None:
    from providers.docker.client import DockerClient
    from providers.docker.endpoint import resolve_endpoint
    from providers.swarm.cluster import Cluster

    endpoint = resolve_endpoint({"host": "unix:///run/nobody.sock"})
    cluster = Cluster(endpoint, {})
    cluster.check_api()  # 1.41, what rig speaks until a daemon refuses it: nothing is asked
    cluster.manager = DockerClient(endpoint, api_version="1.29")  # as if negotiated down with an old daemon
    with pytest.raises(ProviderError, match=r"speaks Docker API 1\.29; the swarm provider needs 1\.30\+"):
        cluster.check_api()
    cluster.close()
