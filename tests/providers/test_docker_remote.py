"""Remote Docker endpoints in-process: settings resolved like the docker CLI, ssh's command and failures, identity."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_endpoints import Unavailable, connect, remove_project_resources
from provider_helpers import process_dead, wait_until

from providers.docker import plugin
from providers.docker.endpoint import resolve_endpoint
from providers.docker.processes import live_pids
from providers.docker.ssh_command import describe_failure, ssh_argv
from rigcli.errors import InterruptedRunError, ProviderError
from rigcli.timeouts import Bound

TLS_ENV = {"DOCKER_HOST": "tcp://build.example:2376", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "/certs"}


def test_the_config_wins_and_each_setting_falls_back_to_its_docker_variable() -> None:
    from_env = resolve_endpoint({}, TLS_ENV)
    assert (from_env.host, from_env.mode, from_env.cert_path) == ("tcp://build.example:2376", "tls", "/certs")
    configured = resolve_endpoint({"host": "tcp://other:9000", "tls_verify": False}, TLS_ENV)
    assert (configured.host, configured.mode, configured.cert_path) == ("tcp://other:9000", "tcp", None)
    certs = resolve_endpoint({"cert_path": "/mine"}, TLS_ENV)
    assert (certs.host, certs.cert_path) == ("tcp://build.example:2376", "/mine")
    assert resolve_endpoint({}, {}).host == "unix:///var/run/docker.sock"
    assert resolve_endpoint({"host": "ssh://me@box:2222"}, TLS_ENV).mode == "ssh"  # TLS settings do not apply


def test_tls_defaults_follow_the_docker_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    # Any non-empty DOCKER_TLS_VERIFY turns verification on, as for the docker CLI; empty turns it off.
    assert resolve_endpoint({}, {"DOCKER_HOST": "tcp://h", "DOCKER_TLS_VERIFY": "0"}).host == "tcp://h:2376"
    assert resolve_endpoint({}, {"DOCKER_HOST": "tcp://h", "DOCKER_TLS_VERIFY": ""}).host == "tcp://h:2375"
    assert resolve_endpoint({}, {"DOCKER_HOST": "tcp://h", "DOCKER_TLS_VERIFY": "1"}).cert_path == f"{tmp_path}/.docker"
    assert resolve_endpoint({"tls_verify": True}, {"DOCKER_HOST": "tcp://h:1"}).base_url == "https://h:1"
    # From env("...", ""): a spelled-out flag counts, an empty one leaves DOCKER_TLS_VERIFY in charge.
    assert resolve_endpoint({"tls_verify": "yes"}, {"DOCKER_HOST": "tcp://h"}).mode == "tls"
    assert resolve_endpoint({"tls_verify": "0"}, {"DOCKER_HOST": "tcp://h", "DOCKER_TLS_VERIFY": "1"}).mode == "tcp"
    assert resolve_endpoint({"tls_verify": ""}, {"DOCKER_HOST": "tcp://h", "DOCKER_TLS_VERIFY": "1"}).mode == "tls"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"host": "npipe:////./pipe/docker_engine"}, "is not supported by the docker provider"),
        ({"host": "localhost:2375"}, "is not supported by the docker provider"),
        ({"host": "unix://docker.sock"}, "absolute socket path"),
        ({"host": "tcp://h:port"}, "invalid port"),
        ({"host": "ssh://me:secret@box"}, "ssh://[user@]host[:port]"),
        ({"host": "ssh://box/var/run/docker.sock"}, "has a path after the host"),
        ({"host": "tcp://h", "tls_verify": "maybe"}, "tls_verify= must be True or False"),
    ],
)
def test_bad_settings_are_one_line_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ProviderError) as raised:
        resolve_endpoint(config, {})
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_ssh_runs_like_the_docker_cli_but_never_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RIG_CONNECT_TIMEOUT", raising=False)
    assert ssh_argv("ssh://deploy@Build-Box:2222") == [
        "ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-T", "-l", "deploy", "-p", "2222",
        "--", "Build-Box", "docker", "system", "dial-stdio",
    ]  # fmt: skip
    assert ssh_argv("ssh://alias")[-5:] == ["--", "alias", "docker", "system", "dial-stdio"]


@pytest.mark.parametrize(
    ("seconds", "option"), [("2.5", "ConnectTimeout=3"), ("0.2", "ConnectTimeout=1"), ("30", "ConnectTimeout=30")]
)
def test_ssh_connects_within_rigs_connect_bound_in_whole_seconds(
    monkeypatch: pytest.MonkeyPatch, seconds: str, option: str
) -> None:
    monkeypatch.setenv("RIG_CONNECT_TIMEOUT", seconds)
    assert option in ssh_argv("ssh://alias")


def test_ssh_giving_up_names_the_bound_it_had() -> None:
    stderr = "Connection timed out during banner exchange\nConnection to 127.0.0.1 port 2222 timed out\n"
    message = describe_failure("ssh://me@box", 255, stderr, Bound(3.0, "RIG_CONNECT_TIMEOUT"))
    assert message.startswith("Cannot reach the Docker daemon at ssh://me@box: unreachable (")
    assert message.endswith("; ssh's ConnectTimeout is 3s (RIG_CONNECT_TIMEOUT))")


@pytest.mark.parametrize(
    ("code", "stderr", "what"),
    [
        (255, "me@box: Permission denied (publickey).\n", "ssh authentication failed"),
        (255, "Host key verification failed.\n", "ssh host key verification failed"),
        (255, "ssh: connect to host box port 22: Connection refused\n", "unreachable"),
        (255, "ssh: Could not resolve hostname box: Name or service not known\n", "unreachable"),
        (127, "bash: line 1: docker: command not found\n", "no docker CLI on the remote host"),
        (1, "", "ssh failed with exit status 1"),
    ],
)
def test_ssh_failures_say_what_failed_in_one_line(code: int, stderr: str, what: str) -> None:
    message = describe_failure("ssh://me@box", code, stderr)
    assert message.startswith(f"Cannot reach the Docker daemon at ssh://me@box: {what}")
    assert "\n" not in message


def test_the_host_is_the_fingerprint_and_the_certificates_are_not(make_harness: Any, tmp_path: Path) -> None:
    def check(config: dict[str, Any]) -> dict[str, Any]:
        checks = make_harness(plugin, config).controller.checks("plan", workflow="web", local=None)
        assert [item["id"] for item in checks] == ["docker.endpoint"]
        found: dict[str, Any] = checks[0]
        return found

    first = check({"host": "tcp://a:2376", "tls_verify": True, "cert_path": str(tmp_path / "one")})
    again = check({"host": "tcp://a:2376", "tls_verify": True, "cert_path": str(tmp_path / "two")})
    other = check({"host": "tcp://b:2376", "tls_verify": True, "cert_path": str(tmp_path / "one")})
    assert first["fingerprint"] == again["fingerprint"] == "tcp://a:2376"
    assert other["fingerprint"] == "tcp://b:2376"
    assert first["value"] == "tcp://a:2376 (TLS)"
    # Nothing answers at tcp://a:2376: plan asks the daemon (issue 17), and says so without changing the identity.
    assert first["status"] == again["status"] == "error" and "tcp://a:2376" in first["message"]


def test_plain_tcp_warns_once_that_the_daemon_is_unauthenticated(make_harness: Any) -> None:
    harness = make_harness(plugin, {"host": "tcp://127.0.0.1:1", "tls_verify": False})
    check = harness.controller.checks("plan", workflow="web", local=None)[0]
    assert "unauthenticated" in check["message"]
    assert check["value"] == "tcp://127.0.0.1:1 (no TLS, unauthenticated)"  # what rig plan shows
    harness.controller.runtime(harness.context)
    warnings = harness.of_type("docker.unauthenticated")
    assert len(warnings) == 1 and "unauthenticated" in warnings[0]["message"]
    assert warnings[0]["host"] == "tcp://127.0.0.1:1"


def test_missing_certificate_files_are_named(make_harness: Any, tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.pem").write_text("")
    harness = make_harness(plugin, {"image": "x", "host": "tcp://127.0.0.1:1", "tls_verify": True,
                                    "cert_path": str(tmp_path / "certs")})  # fmt: skip
    with pytest.raises(ProviderError, match=r"TLS certificate files missing: no cert.pem, key.pem in .*/certs"):
        harness.runtime.create_machine()


@pytest.fixture
def ssh_docker(make_harness: Any, project: Path) -> Iterator[Any]:
    """A docker harness on the ssh endpoint (skipped without it, failed under RIG_REQUIRE_DOCKER=1)."""
    try:
        daemon = connect("ssh", os.environ.get("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
    except Unavailable as exc:
        if os.environ.get("RIG_REQUIRE_DOCKER") == "1":
            pytest.fail(f"RIG_REQUIRE_DOCKER=1 but {exc}")
        pytest.skip(str(exc))
    harness = make_harness(plugin, {"image": daemon.image, "host": daemon.host})
    yield harness
    remove_project_resources(daemon.api, project, harness.controller)
    daemon.api.close()


def test_ssh_connections_are_processes_that_end_with_the_client(ssh_docker: Any) -> None:
    before = set(live_pids())
    machine = ssh_docker.runtime.create_machine()
    assert machine.exec("echo over ssh").stdout == "over ssh\n"
    ours = set(live_pids()) - before
    assert ours, "no ssh process carried the requests"
    assert all(Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ssh\0") for pid in ours)
    ssh_docker.controller.close()  # its httpx client (the exec) and its own connections (the create)
    assert all(process_dead(pid) for pid in ours)
    assert machine.exec("echo again").stdout == "again\n"  # a closed client connects again on demand


def test_a_cancelled_run_closes_its_ssh_connections_once_its_command_stopped(ssh_docker: Any) -> None:
    before = set(live_pids())
    machine = ssh_docker.runtime.create_machine()
    seen: set[int] = set()

    def on_output(event: dict[str, Any]) -> None:
        if event["type"] == "command.output" and not seen:
            seen.update(set(live_pids()) - before)
            ssh_docker.cancellation.cancel()

    ssh_docker.bus.subscribe(on_output)
    with pytest.raises(InterruptedRunError):
        machine.exec("sleep 300 & echo started; wait", timeout=120)
    assert seen, "no ssh process carried the command"
    assert wait_until(lambda: all(process_dead(pid) for pid in seen), timeout=10), "ssh outlived the cancelled run"


def test_the_remote_daemon_is_reached_without_a_shared_filesystem(ssh_docker: Any) -> None:
    # The daemon behind ssh and TLS runs here too, but nothing is passed by path: files go through /archive.
    machine = ssh_docker.runtime.create_machine()
    machine.write_text("/srv/note.txt", "uploaded\n")
    assert machine.read_text("/srv/note.txt") == "uploaded\n"
    assert machine.exec("cat /srv/note.txt").stdout == "uploaded\n"
