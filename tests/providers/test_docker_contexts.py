"""Docker CLI contexts: a real context store in a temp DOCKER_CONFIG, chosen like the docker CLI
chooses it, pointing at the running daemons (unix socket and TLS)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from docker_endpoints import Unavailable, connect, tls_settings
from e2e_support import Rig, copy_example, rig_env

from providers.docker.endpoint import resolve_endpoint
from rigcli.errors import ProviderError

IMAGE = os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")


def write_context(config: Path, name: str, host: str, certs: str | None = None, *, skip_verify: bool = False) -> None:
    """What `docker context create NAME --docker host=HOST[,ca=,cert=,key=]` writes."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    meta = config / "contexts" / "meta" / digest
    meta.mkdir(parents=True)
    endpoint = {"Host": host, "SkipTLSVerify": skip_verify}
    (meta / "meta.json").write_text(json.dumps({"Name": name, "Metadata": {}, "Endpoints": {"docker": endpoint}}))
    if certs is not None:
        tls = config / "contexts" / "tls" / digest / "docker"
        tls.mkdir(parents=True)
        for item in ("ca.pem", "cert.pem", "key.pem"):
            shutil.copy(Path(certs) / item, tls / item)


def use(config: Path, name: str) -> None:
    """What `docker context use NAME` writes."""
    (config / "config.json").write_text(json.dumps({"auths": {}, "currentContext": name}))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    config = tmp_path / "docker-config"
    config.mkdir()
    write_context(config, "plain", "unix:///run/plain.sock")
    write_context(config, "remote", "tcp://build.example:2376", str(certs_folder(tmp_path)))
    write_context(config, "lax", "tcp://lax.example:2376", skip_verify=True)
    return config


def certs_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "some-certs"
    folder.mkdir(exist_ok=True)
    for item in ("ca.pem", "cert.pem", "key.pem"):
        (folder / item).write_text("not read until a connection is made\n")
    return folder


def test_the_docker_cli_order_host_then_docker_host_then_docker_context_then_current(store: Path) -> None:
    env = {"DOCKER_CONFIG": str(store)}
    assert resolve_endpoint({}, env).host == "unix:///var/run/docker.sock"  # no config.json: the default
    use(store, "plain")
    current = resolve_endpoint({}, env)
    assert (current.host, current.mode, current.context) == ("unix:///run/plain.sock", "unix", "plain")
    named = resolve_endpoint({}, {**env, "DOCKER_CONTEXT": "remote"})
    assert (named.host, named.mode, named.context) == ("tcp://build.example:2376", "tls", "remote")
    assert named.cert_path == str(store / "contexts" / "tls" / hashlib.sha256(b"remote").hexdigest() / "docker")
    assert resolve_endpoint({}, {**env, "DOCKER_CONTEXT": "default"}).context is None  # the environment's own
    by_variable = resolve_endpoint({}, {**env, "DOCKER_CONTEXT": "remote", "DOCKER_HOST": "unix:///run/env.sock"})
    assert (by_variable.host, by_variable.context) == ("unix:///run/env.sock", None)
    by_config = resolve_endpoint({"host": "unix:///run/config.sock"}, {**env, "DOCKER_CONTEXT": "remote"})
    assert (by_config.host, by_config.context) == ("unix:///run/config.sock", None)


def test_docker_config_defaults_to_home(store: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(store, home / ".docker")
    use(home / ".docker", "plain")
    assert resolve_endpoint({}, {"HOME": str(home)}).context == "plain"


def test_a_context_that_is_not_there_or_skips_verification_is_one_line(store: Path) -> None:
    env = {"DOCKER_CONFIG": str(store)}
    with pytest.raises(ProviderError, match=r'Docker context "gone" \(named by DOCKER_CONTEXT\) does not exist: no '):
        resolve_endpoint({}, {**env, "DOCKER_CONTEXT": "gone"})
    use(store, "gone")
    with pytest.raises(ProviderError, match=r"named by .*config\.json\) does not exist"):
        resolve_endpoint({}, env)
    with pytest.raises(ProviderError, match=r"skips verifying the daemon's certificate"):
        resolve_endpoint({}, {**env, "DOCKER_CONTEXT": "lax"})


def example_with_context(tmp_path: Path, name: str, host: str, certs: str | None) -> Rig:
    """The docker example with no DOCKER_* variables, its daemon chosen by a context in DOCKER_CONFIG."""
    config = tmp_path / "docker-config"
    write_context(config, name, host, certs)
    use(config, name)
    env = rig_env(tmp_path, RIG_DOCKER_IMAGE=IMAGE, DOCKER_CONFIG=str(config))
    for key in ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT"):
        env.pop(key, None)
    return Rig(copy_example("docker", tmp_path), env)


def reachable(endpoint: str) -> str:
    try:
        daemon = connect(endpoint, IMAGE)
    except Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_DOCKER") == "1":
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {exc}")
        pytest.skip(str(exc))
    daemon.api.close()
    return daemon.host


def test_doctor_names_the_context_of_a_unix_daemon(tmp_path: Path) -> None:
    host = reachable("unix")
    rig = example_with_context(tmp_path, "local-sock", host, None)
    text = rig.run("doctor").stdout
    assert f"{host} (unix socket) from docker context local-sock, Docker" in text
    report = rig.json("doctor")
    assert (report["docker"]["context"], report["docker"]["reachable"]) == ("local-sock", True)
    (box,) = report["project"]["docker_providers"]
    assert (box["context"], box["host"]) == ("local-sock", host)


def test_a_tls_context_is_used_for_a_whole_story_apply_fork_exec(tmp_path: Path) -> None:
    host = reachable("tls")
    _, certs = tls_settings()
    rig = example_with_context(tmp_path, "build-box", host, certs)
    assert f"{host} (TLS) from docker context build-box" in rig.run("doctor").stdout
    try:
        rig.json("apply")
        rig.json("fork", "dev")
        done = rig.run("exec", "dev", "--", "sh", "-c", "hostname; exit 5", check=False)
        assert done.returncode == 5 and done.stdout.strip()
        (workspace,) = rig.json("ls")["workflows"][0]["workspaces"]
        assert workspace["live"]["state"] == "running"
        assert rig.run("rm", "dev", "--yes", check=False).returncode == 0
    finally:
        rig.run("gc", check=False)
