"""Remote daemons through the installed ``rig``: one-line failures, the daemon in the fingerprint, doctor's report."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_endpoints import Unavailable, connect, tls_settings
from e2e_support import Rig, copy_example, rig_env, statuses

IMAGE = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")


def required(name: str) -> str:
    """A variable .ci/docker-remote.sh exports; the test skips without it unless RIG_REQUIRE_DOCKER=1."""
    value = os.environ.get(name)
    if not value:
        reason = f"{name} is not set (source .ci/docker-remote.sh && docker_remote_start)"
        if os.environ.get("RIG_REQUIRE_DOCKER") == "1":
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)
    return value


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def example(tmp_path: Path, **docker: str) -> Rig:
    """The docker example, pointed at a daemon the way a docker CLI user would (DOCKER_* variables)."""
    env = rig_env(tmp_path, RIG_DOCKER_IMAGE=IMAGE)
    for key in ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        env.pop(key, None)
    env.update(docker)
    return Rig(copy_example("docker", tmp_path), env)


def mixed_certs(tmp_path: Path) -> str:
    """The right CA, but a client certificate the daemon never issued."""
    _, certs = tls_settings()
    rogue = required("RIG_TEST_DOCKER_ROGUE_CERT_PATH")
    mixed = tmp_path / "mixed-certs"
    mixed.mkdir()
    shutil.copy(Path(certs) / "ca.pem", mixed / "ca.pem")
    for name in ("cert.pem", "key.pem"):
        shutil.copy(Path(rogue) / name, mixed / name)
    return str(mixed)


CASES = ["wrong-ca", "refused-client-certificate", "unreachable-tcp", "unreachable-ssh", "refused-ssh-key"]


@pytest.mark.parametrize("case", CASES)
def test_a_daemon_that_cannot_be_reached_is_one_line_and_exit_1(case: str, tmp_path: Path) -> None:
    tls_host = required("RIG_TEST_DOCKER_TLS_HOST")
    certs = required("RIG_TEST_DOCKER_CERT_PATH")
    settings, expected = {
        "wrong-ca": (
            {"DOCKER_HOST": tls_host, "DOCKER_TLS_VERIFY": "1",
             "DOCKER_CERT_PATH": required("RIG_TEST_DOCKER_ROGUE_CERT_PATH")},
            f"at {tls_host}: certificate check failed",
        ),
        "refused-client-certificate": (
            {"DOCKER_HOST": tls_host, "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": mixed_certs(tmp_path)},
            f"at {tls_host}: TLS handshake failed: the daemon refused the client certificate",
        ),
        "unreachable-tcp": (
            {"DOCKER_HOST": f"tcp://127.0.0.1:{closed_port()}", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certs},
            ": unreachable (",
        ),
        "unreachable-ssh": ({"DOCKER_HOST": f"ssh://root@127.0.0.1:{closed_port()}"}, ": unreachable (ssh: connect"),
        "refused-ssh-key": (
            {"DOCKER_HOST": required("RIG_TEST_DOCKER_SSH_BADKEY_HOST")},
            ": ssh authentication failed (",
        ),
    }[case]  # fmt: skip
    rig = example(tmp_path, **settings)
    done = rig.run("--json", "apply", check=False)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: Cannot reach the Docker daemon at {settings['DOCKER_HOST']}")
    assert expected in lines[0]
    assert "Traceback" not in done.stderr


@pytest.fixture
def tls_daemon() -> Iterator[Any]:
    try:
        daemon = connect("tls", IMAGE)
    except Unavailable as exc:
        required("RIG_TEST_DOCKER_TLS_HOST")  # fails under RIG_REQUIRE_DOCKER=1 when unset
        pytest.skip(str(exc))
    yield daemon
    daemon.api.close()


def test_another_daemon_is_provider_changed_and_new_certificates_are_not(tls_daemon: Any, tmp_path: Path) -> None:
    host, certs = tls_settings()
    rig = example(tmp_path, DOCKER_HOST=host, DOCKER_TLS_VERIFY="1", DOCKER_CERT_PATH=certs)
    try:
        applied = rig.json("apply")
        assert applied["plan"]["node_count"] == 2
        plan = rig.json("plan")
        assert statuses(plan) == {"tooling": ("cached", "cached"), "project": ("cached", "cached")}
        [check] = [item for item in plan["provider_checks"] if item["provider_id"] == "docker"]
        assert check["value"] == f"{host} (TLS)"

        # The same daemon with a copy of the certificates elsewhere: still the same machines.
        copied = tmp_path / "copied-certs"
        shutil.copytree(certs, copied)
        rig.env["DOCKER_CERT_PATH"] = str(copied)
        assert statuses(rig.json("plan"))["tooling"] == ("cached", "cached")

        # The same daemon under another address is another endpoint as far as rig can tell.
        rig.env.update(DOCKER_HOST=required("RIG_TEST_DOCKER_SSH_HOST"), DOCKER_TLS_VERIFY="")
        assert statuses(rig.json("plan")) == {
            "tooling": ("pending", "provider-changed"),
            "project": ("pending", "upstream-pending"),
        }
    finally:
        remove_labelled_images(tls_daemon.api, rig.project)


def remove_labelled_images(api: Any, project: Path) -> None:
    labels = json.dumps({"label": [f"rig.project={project}"]})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def test_doctor_shows_each_docker_providers_endpoint_transport_and_version(tmp_path: Path) -> None:
    tls_host, certs = required("RIG_TEST_DOCKER_TLS_HOST"), required("RIG_TEST_DOCKER_CERT_PATH")
    ssh_host = required("RIG_TEST_DOCKER_SSH_HOST")
    project = tmp_path / "doctor"
    project.mkdir()
    (project / "rig_config.py").write_text(
        "from rigcli import define_provider, workflow\n"
        "app = workflow('w', providers={\n"
        f"    'tls': define_provider('docker', host={tls_host!r}, tls_verify=True, cert_path={certs!r}),\n"
        f"    'ssh': define_provider('docker', host={ssh_host!r}),\n"
        f"    'down': define_provider('docker', host='tcp://127.0.0.1:{closed_port()}', tls_verify=False),\n"
        "})\n"
        "workflows = app.sequence('root').task('noop', lambda: None)\n"
    )
    rig = Rig(project, rig_env(tmp_path))
    report = rig.json("doctor")
    found = {item["name"]: item for item in report["project"]["docker_providers"]}
    assert set(found) == {"tls", "ssh", "down"}
    assert (found["tls"]["host"], found["tls"]["mode"], found["tls"]["reachable"]) == (tls_host, "tls", True)
    assert found["tls"]["version"] and found["tls"]["api_version"]
    assert (found["ssh"]["host"], found["ssh"]["mode"], found["ssh"]["reachable"]) == (ssh_host, "ssh", True)
    assert found["ssh"]["version"] == found["tls"]["version"]
    assert found["down"]["reachable"] is False and "unreachable" in found["down"]["error"]
    text = rig.run("doctor").stdout
    assert f"{tls_host} (TLS), Docker Engine {found['tls']['version']}" in text
    assert f"{ssh_host} (ssh), Docker Engine {found['ssh']['version']}" in text


@pytest.mark.parametrize("endpoint", ["ssh", "tls"])
def test_the_remote_docker_example_runs_on_the_build_host(endpoint: str, tls_daemon: Any, tmp_path: Path) -> None:
    host, certs = tls_settings()
    settings = {"BUILD_HOST": required("RIG_TEST_DOCKER_SSH_HOST")}
    if endpoint == "tls":
        settings = {"BUILD_HOST": host, "BUILD_TLS_VERIFY": "1", "DOCKER_CERT_PATH": certs}
    env = rig_env(tmp_path, RIG_DOCKER_IMAGE=IMAGE, **settings)
    env.pop("DOCKER_HOST", None)  # the example's own setting is what must reach the build host
    rig = Rig(copy_example("remote-docker", tmp_path), env)
    try:
        assert rig.json("apply")["context"]["base"]["provider"] == "docker"
        workspace = rig.json("fork", "dev")
        where = rig.json("op", "dev", "where")
        assert where["daemon"] == settings["BUILD_HOST"]
        assert where["container"] == workspace["ctx"]["container"]
        assert where["output"] == f"toolchain ready on {workspace['ctx']['container'][:12]}\n"
        assert tls_daemon.api.get(f"/containers/{where['container']}/json").json()["State"]["Running"]
        rig.json("rm", "dev", "--yes")
        assert tls_daemon.api.get(f"/containers/{where['container']}/json").status_code == 404
    finally:
        remove_labelled_images(tls_daemon.api, rig.project)
