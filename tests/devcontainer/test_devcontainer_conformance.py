"""rig and the reference implementation (``@devcontainers/cli``) agree, configuration by configuration,
on what a person sees inside: each corpus project is copied twice under the same name, brought up
with ``devcontainer up`` + ``devcontainer exec`` and with ``rig fork`` + ``rig shell`` + ``rig exec``
on the same daemon, and the output of its ``probe.sh`` (``id``, the working directory, the
environment the configuration sets, the files each hook wrote and their order, what features
installed, mounts) must read the same. The only differences allowed are the deliberate ones
(docs/devcontainers.md): nothing in a probe may see a bind-mounted source or a second onCreate.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.devcontainer.dc_support import Rig, remove_made_for
from tests.devcontainer.registry import Registry, publish_feature, run_registry

CORPUS = Path(__file__).parent / "corpus"
REPO = Path(__file__).resolve().parents[2]
CLI_SECONDS = 240


def reference_cli() -> str:
    """The pinned reference CLI: RIG_DEVCONTAINER_CLI, else where .ci/run installs it; skipped when
    absent unless RIG_REQUIRE_DEVCONTAINER_CLI=1, which makes that a failure."""
    candidates = [
        os.environ.get("RIG_DEVCONTAINER_CLI", ""),
        str(REPO / ".ci/devcontainer-cli/node_modules/.bin/devcontainer"),
    ]
    found = next((item for item in candidates if item and os.access(item, os.X_OK)), None)
    if found is None:
        reason = "the reference dev containers CLI is not installed (.ci/run installs it; or set RIG_DEVCONTAINER_CLI)"
        if os.environ.get("RIG_REQUIRE_DEVCONTAINER_CLI") == "1":
            pytest.fail(f"RIG_REQUIRE_DEVCONTAINER_CLI=1 but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def cli() -> str:
    return reference_cli()


@pytest.fixture(scope="module")
def feature_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A registry over TLS on loopback (the reference speaks only HTTPS) holding the test's OCI feature."""
    try:
        running = run_registry(tmp_path_factory.mktemp("registry"), tls=True)
        registry = next(running)
    except FileNotFoundError as exc:
        if os.environ.get("RIG_REQUIRE_DEVCONTAINER_CLI") == "1":
            pytest.fail(f"RIG_REQUIRE_DEVCONTAINER_CLI=1 but {exc}")
        pytest.skip(str(exc))
    publish_feature(registry, "rig-test/features/hello", "1", Path(__file__).parent / "oci-features/hello")
    yield registry
    next(running, None)


def _copy(name: str, root: Path, registry: Registry) -> Path:
    target = root / f"dc-{name}"  # the same folder name for both: /workspaces/dc-NAME in each
    shutil.copytree(CORPUS / name, target)
    for path in target.rglob("*.sh"):
        path.chmod(0o755)
    for config in target.rglob("*devcontainer.json"):
        config.write_text(config.read_text().replace("@REGISTRY@", registry.address))
    return target


@pytest.fixture
def reference_made(daemon: httpx.Client) -> Iterator[list[Path]]:
    """Folders brought up by the reference CLI; their containers (by its label) and images removed after."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        labels = json.dumps({"label": [f"devcontainer.local_folder={folder}"]})
        for container in daemon.get("/containers/json", params={"all": "true", "filters": labels}).json():
            daemon.delete(f"/containers/{container['Id']}", params={"force": "true", "v": "true"})
        for image in daemon.get("/images/json").json():
            if any(tag.startswith(f"vsc-{folder.name}-") for tag in image.get("RepoTags") or []):
                daemon.delete(f"/images/{image['Id']}", params={"force": "true"})
    for volume in daemon.get("/volumes").json().get("Volumes") or []:
        if re.fullmatch(r"dc-[0-9a-v]{52}", volume["Name"]):  # the corpus's volumes, named by ${devcontainerId}
            daemon.delete(f"/volumes/{volume['Name']}", params={"force": "true"})


def _normal(text: str, folder: Path) -> list[str]:
    return [line.replace(str(folder), "<local>").rstrip() for line in text.strip().splitlines()]


def _reference(cli: str, folder: Path, probe: str, registry: Registry) -> list[str]:
    env = {**os.environ, "HOME": str(folder.parent / "ref-home"), "NODE_EXTRA_CA_CERTS": str(registry.ca_file)}
    up = subprocess.run(
        [cli, "up", "--workspace-folder", str(folder)], env=env, capture_output=True, text=True, timeout=CLI_SECONDS
    )
    assert up.returncode == 0, f"devcontainer up failed: {up.stdout[-2000:]} {up.stderr[-3000:]}"
    done = subprocess.run(
        [cli, "exec", "--workspace-folder", str(folder), "sh", "-c", probe],
        env=env, capture_output=True, text=True, timeout=CLI_SECONDS,
    )  # fmt: skip
    assert done.returncode == 0, f"devcontainer exec failed: {done.stderr[-3000:]}"
    return _normal(done.stdout, folder)


def _rig(folder: Path, probe: str, registry: Registry) -> list[str]:
    rig = Rig(folder, folder.parent / "rig-home", SSL_CERT_FILE=str(registry.ca_file))
    rig.run("fork", "w")
    rig.run("shell", "w", stdin="exit\n")  # the session that runs postAttachCommand (up runs it too)
    return _normal(rig.run("exec", "w", "--", "sh", "-c", probe).stdout, folder)


@pytest.mark.parametrize("name", sorted(path.name for path in CORPUS.iterdir() if path.is_dir()))
def test_rig_and_the_reference_agree(
    name: str,
    cli: str,
    tmp_path: Path,
    daemon: httpx.Client,
    reference_made: list[Path],
    feature_registry: Registry,
) -> None:
    probe = (CORPUS / name / "probe.sh").read_text()
    ours = _copy(name, tmp_path / "rig", feature_registry)
    theirs = _copy(name, tmp_path / "reference", feature_registry)
    reference_made.append(theirs)
    try:
        expected = _reference(cli, theirs, probe, feature_registry)
        seen = _rig(ours, probe, feature_registry)
    finally:
        remove_made_for(daemon, ours)
    assert seen == expected
    assert len(expected) > 2  # the probe saw something of the configuration


def test_the_corpus_covers_every_key_variable_hook_form_and_feature_kind() -> None:
    texts = "\n".join(path.read_text() for path in CORPUS.rglob("devcontainer.json"))
    texts += "\n".join(path.read_text() for path in CORPUS.rglob(".devcontainer.json"))
    keys = [
        "image", "build", "dockerfile", "context", "args", "target", "features", "containerEnv", "remoteEnv",
        "containerUser", "remoteUser", "workspaceFolder", "mounts", "capAdd", "securityOpt", "privileged",
        "init", "overrideCommand", "runArgs", "forwardPorts", "portsAttributes", "hostRequirements",
        "customizations", "shutdownAction", "initializeCommand", "onCreateCommand", "updateContentCommand",
        "postCreateCommand", "postStartCommand", "postAttachCommand", "workspaceMount",
        "${localEnv:", "${localWorkspaceFolder}", "${localWorkspaceFolderBasename}", "${containerWorkspaceFolder}",
        "${containerWorkspaceFolderBasename}", "${devcontainerId}", "${containerEnv:",
    ]  # fmt: skip
    assert [key for key in keys if key not in texts] == []
    assert len([path for path in CORPUS.iterdir() if path.is_dir()]) >= 25
