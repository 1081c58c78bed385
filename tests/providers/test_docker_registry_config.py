"""The docker provider's ``registry=``, without a daemon: how it is read, what it names snapshots, what of the
config is the provider's identity with it, and the refusals that come before any request."""

from __future__ import annotations

from typing import Any

import pytest
from provider_helpers import Harness

from providers.docker import plugin
from providers.docker.direct_status import status_directly
from providers.docker.prebuilds import component, key_for, repository_for, shared_image
from providers.docker.registry_name import parse_registry
from rigcli.errors import ProviderError
from rigcli.provider_api import SupportsIdentity

TLS = {"host": "tcp://build-a:2376", "tls_verify": True, "cert_path": "/home/me/.docker/a"}
REF = {
    "provider": "docker",
    "kind": "image",
    "image_id": "sha256:" + "1" * 64,
    "image": "127.0.0.1:5000/rig/web/tools@sha256:" + "2" * 64,
}


@pytest.mark.parametrize(
    ("value", "name", "url"),
    [
        ("127.0.0.1:5000", "127.0.0.1:5000", "http://127.0.0.1:5000"),  # loopback: plain HTTP, as dockerd allows
        ("localhost:5000", "localhost:5000", "http://localhost:5000"),
        ("http://[::1]:5000", "[::1]:5000", "http://[::1]:5000"),
        ("Registry.Example:5000", "registry.example:5000", "https://registry.example:5000"),
        ("https://registry.example", "registry.example", "https://registry.example"),
    ],
)
def test_a_registry_is_https_but_on_loopback(value: str, name: str, url: str) -> None:
    registry = parse_registry(value, provider="docker")
    assert (registry.name, registry.url) == (name, url)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("http://registry.lan:5000", "plain HTTP, which rig speaks only to a registry on this machine"),
        ("registry.lan:5000/team", "no path"),
        ("ftp://registry.lan", "must be host[:port]"),
        (5000, "must be the registry's host[:port]"),
    ],
)
def test_a_registry_rig_will_not_speak_to_is_refused_when_the_provider_starts(
    make_harness: Any, value: object, why: str
) -> None:
    with pytest.raises(ProviderError, match="docker provider config registry=") as refused:
        make_harness(plugin, {"image": "rig/base:busybox", "registry": value})
    assert why in str(refused.value)


def test_snapshots_are_named_by_workflow_task_and_cache_key_only() -> None:
    assert repository_for("web", "base.install") == "rig/web/base-install"
    assert repository_for("My App", "deps.node_modules") == "rig/my-app/deps-node_modules"
    assert [component(text) for text in ("a__b", "a___b", "-x-", "é", "")] == ["a__b", "a-b", "x", "x", "x"]
    assert key_for("sha256-0123456789abcdef0123456789abcdef") == "0123456789abcdef"
    outside_a_task = key_for(None)
    assert len(outside_a_task) == 16 and outside_a_task != key_for(None)


def test_a_ref_names_the_registrys_copy_by_digest() -> None:
    assert shared_image(REF) == ("127.0.0.1:5000", "rig/web/tools", "sha256:" + "2" * 64)
    assert shared_image({**REF, "image": "rig/snapshot:x"}) is None
    assert shared_image({key: value for key, value in REF.items() if key != "image"}) is None


def test_with_a_registry_the_identity_leaves_out_where_the_daemon_is() -> None:
    assert isinstance(plugin, SupportsIdentity)
    config = {"image": "rig/base:busybox", "registry": "127.0.0.1:5000", "env": {"A": "1"}, **TLS}
    assert plugin.identity_config(config) == {
        "image": "rig/base:busybox",
        "registry": "127.0.0.1:5000",
        "env": {"A": "1"},
    }
    without = {"image": "rig/base:busybox", **TLS}
    assert plugin.identity_config(without) == without
    assert plugin.identity_config({**without, "registry": ""}) == {**without, "registry": ""}


def test_the_checks_name_the_registry_both_ways(make_harness: Any) -> None:
    config = {"image": "rig/base:busybox", "registry": "127.0.0.1:5000", **TLS}
    harness: Harness = make_harness(plugin, config)
    (check,) = harness.controller.checks("offline", workflow="web", local=harness.setup.local)
    assert check["fingerprint"] == "registry=127.0.0.1:5000"
    assert "snapshots shared through http://127.0.0.1:5000" in check["message"]
    direct = status_directly(config)
    assert direct is not None
    try:
        assert [entry["fingerprint"] for entry in direct.checks()] == ["registry=127.0.0.1:5000"]
    finally:
        direct.close()
    plain = status_directly({"image": "rig/base:busybox", **TLS})
    assert plain is not None
    try:
        assert [entry["fingerprint"] for entry in plain.checks()] == ["tcp://build-a:2376"]
    finally:
        plain.close()


def test_a_snapshot_in_another_registry_is_never_pulled_nor_valid(make_harness: Any) -> None:
    harness: Harness = make_harness(plugin, {"image": "rig/base:busybox", "registry": "127.0.0.1:6000", **TLS})
    assert harness.controller.validate_artifact(REF) is False
    with pytest.raises(ProviderError, match=r"pulls only from its own \(127.0.0.1:6000\)"):
        harness.runtime.from_snapshot(REF)
