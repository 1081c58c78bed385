"""A plan's registry question (``manifest_check``): a registry on this machine is asked over rig's own socket,
and answers exactly as urllib's way of asking (the one every other registry gets) hears it.

Against a real registry (``docker-registry``) holding an image pushed by the test daemon, a silent peer
that accepts and never answers, and a port nothing listens on: each answer and each error line is the
documented one, whichever way the question was asked.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import registry_server

from providers.docker import manifest_check
from providers.docker.manifest_check import manifest_exists
from providers.docker.registry_name import parse_registry
from rigcli.errors import UnreachableError
from rigcli.timeouts import Bound
from tests.silent_peers import Silent

IMAGE = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
BOUND = Bound(1.0, "RIG_CHECK_TIMEOUT")


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def pushed(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(registry name, digest) of the test image pushed to a private registry as ``rig/check:one``."""
    try:
        registry = registry_server.start(tmp_path / "registry")
    except registry_server.Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_REGISTRY") == "1":
            pytest.fail(f"RIG_REQUIRE_REGISTRY=1 but {exc}")
        pytest.skip(str(exc))
    tag = f"{registry.name}/rig/check:one"
    try:
        tagged = _docker("tag", IMAGE, tag)
        if tagged.returncode != 0:
            pytest.skip(f"no {IMAGE} on the test daemon: {tagged.stderr.strip()}")
        pushed = _docker("push", tag)
        assert pushed.returncode == 0, pushed.stderr
        digest = registry.digest("rig/check", "one")
        assert digest is not None
        yield registry.name, digest
    finally:
        _docker("rmi", "-f", tag)
        registry.stop()


def _both_ways(name: str, path: str) -> tuple[int, int]:
    registry = parse_registry(name, provider="docker")
    here = manifest_check._status_here(registry, path, 5.0, BOUND, BOUND)
    through_urllib = manifest_check._status_through_urllib(registry, path, 5.0, BOUND, BOUND)
    return here, through_urllib


def test_a_registry_here_answers_as_urllib_hears_it(pushed: tuple[str, str]) -> None:
    name, digest = pushed
    registry = parse_registry(name, provider="docker")
    assert manifest_exists(registry, "rig/check", "one", bound=BOUND) is True
    assert manifest_exists(registry, "rig/check", digest, bound=BOUND) is True
    assert manifest_exists(registry, "rig/check", "two", bound=BOUND) is False
    assert manifest_exists(registry, "rig/none", digest, bound=BOUND) is False
    for reference in ("one", digest, "two"):
        here, through_urllib = _both_ways(name, f"/v2/rig/check/manifests/{reference}")
        assert here == through_urllib, reference
    assert _both_ways(name, "/v2/rig/check/manifests/one") == (200, 200)
    assert _both_ways(name, "/v2/rig/check/manifests/two") == (404, 404)


def test_a_registry_here_that_never_answers_is_given_up_at_the_bound() -> None:
    with Silent.tcp() as peer:
        registry = parse_registry(f"127.0.0.1:{peer.port}", provider="docker")
        with pytest.raises(UnreachableError) as raised:
            manifest_exists(registry, "rig/check", "one", bound=BOUND)
    expected = f"Cannot reach the registry at http://127.0.0.1:{peer.port}: no answer to HEAD "
    assert str(raised.value) == f"{expected}/v2/rig/check/manifests/one within 1s (RIG_CHECK_TIMEOUT)"


def test_a_registry_here_that_is_not_running_is_unreachable() -> None:
    registry = parse_registry("127.0.0.1:1", provider="docker")
    with pytest.raises(UnreachableError, match=r"^Cannot reach the registry at http://127\.0\.0\.1:1: .*refused"):
        manifest_exists(registry, "rig/check", "one", bound=BOUND)
