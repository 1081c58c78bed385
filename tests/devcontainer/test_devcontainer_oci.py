"""OCI features fetched by rig itself: plain HTTP only on loopback, kept after the first fetch, and a
registry that cannot serve one refused at load in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.devcontainer.oci import FeatureRef
from tests.devcontainer.conftest import MakeProject
from tests.devcontainer.dc_support import IMAGE
from tests.devcontainer.registry import Registry, publish_feature, run_registry

FEATURE = Path(__file__).parent / "oci-features/hello"


@pytest.fixture
def plain_registry(tmp_path: Path) -> Iterator[Registry]:
    try:
        running = run_registry(tmp_path / "registry", tls=False)
        registry = next(running)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    yield registry
    next(running, None)


def test_plain_http_only_on_loopback() -> None:
    assert FeatureRef("127.0.0.1:5000/features/x:1").loopback
    assert FeatureRef("localhost:5000/features/x").loopback
    assert not FeatureRef("ghcr.io/devcontainers/features/node:1").loopback
    assert not FeatureRef("registry.example.invalid:5000/features/x:1").loopback


def test_an_oci_feature_from_a_plain_http_registry_on_loopback(
    make_project: MakeProject, plain_registry: Registry
) -> None:
    digest = publish_feature(plain_registry, "features/hello", "1", FEATURE)
    key = f"{plain_registry.address}/features/hello:1"
    rig = make_project({"image": IMAGE, "features": {key: {"greeting": "hey"}}})
    assert "feature:hello" in rig.plan()
    rig.run("fork", "w")
    assert rig.exec("w", 'cat /tmp/features; echo "$HELLO_FROM"').split() == ["oci", "hey", "registry", "registry"]
    kept = list((Path(rig.env["RIG_HOME"]) / "cache/devcontainer-features").glob("*/manifest-digest"))
    assert [path.read_text() for path in kept] == [digest]


def test_a_feature_that_cannot_be_fetched_is_refused_at_load(
    make_project: MakeProject, plain_registry: Registry
) -> None:
    key = f"{plain_registry.address}/features/missing:1"
    rig = make_project({"image": IMAGE, "features": {key: {}}})
    done = rig.run("plan", check=False)
    assert done.returncode == 1
    assert f'Feature "{key}"' in done.stderr and "HTTP 404" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_kept_feature_needs_no_registry(make_project: MakeProject, tmp_path: Path) -> None:
    running = run_registry(tmp_path / "gone", tls=False)
    try:
        registry = next(running)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    publish_feature(registry, "features/hello", "1", FEATURE)
    rig = make_project({"image": IMAGE, "features": {f"{registry.address}/features/hello:1": {}}})
    first = rig.json("plan")
    next(running, None)  # the registry is stopped
    assert rig.json("plan")["nodes"] == first["nodes"]
    assert json.dumps(first).count("feature:hello") == 2  # path and name
