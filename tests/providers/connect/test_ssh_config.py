"""rig ssh-config: its --json shape, host keys and rig's known_hosts, --install/--uninstall touching one
Include line of ~/.ssh/config, two projects of one alias refused, and rig rm taking the key away."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig, write_project
from tests.providers.connect.conftest import LOCAL


def _rig(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RIG, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)


def _setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = Path(tempfile.mkdtemp(prefix="rig-cfg-", dir="/tmp"))
    env = env_with_rig({"HOME": str(home), "RIG_HOME": str(home / "rig")})
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_RUNTIME_DIR", None)
    project = write_project(tmp_path / "My Proj", LOCAL)
    assert _rig(project, env, "fork", "dev").returncode == 0
    return project, env


def test_json_shape_keys_and_rm(tmp_path: Path) -> None:
    project, env = _setup(tmp_path)
    done = _rig(project, env, "--json", "ssh-config")
    assert done.returncode == 0, done.stderr
    [host] = json.loads(done.stdout)["hosts"]
    assert set(host) == {"workspace", "alias", "user", "proxy_command", "known_hosts"}
    assert host["workspace"] == "dev" and host["alias"] == "dev.my-proj.rig"
    assert "ssh-proxy dev" in host["proxy_command"] and str(project) in host["proxy_command"]
    known = Path(host["known_hosts"])
    assert known.read_text().startswith("dev.my-proj.rig ssh-ed25519 ")
    [key] = [item for item in (Path(env["RIG_HOME"]) / "ssh" / "host_keys").iterdir() if item.suffix != ".user"]
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert b"OPENSSH PRIVATE KEY" in key.read_bytes()
    assert _rig(project, env, "ssh-config", "nope").returncode == 1
    removed = _rig(project, env, "rm", "dev", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert not key.exists()
    assert "dev.my-proj.rig" not in known.read_text()


def test_install_touches_one_include_line_idempotently(tmp_path: Path) -> None:
    project, env = _setup(tmp_path)
    user_config = Path(env["HOME"]) / ".ssh" / "config"
    user_config.parent.mkdir(mode=0o700)
    user_config.write_text("Host other\n  User me\n")
    for _ in range(2):
        assert _rig(project, env, "ssh-config", "--install").returncode == 0
    lines = user_config.read_text().splitlines()
    assert lines[1:] == ["Host other", "  User me"]
    assert lines[0].startswith("Include ") and lines[0].endswith("rig/ssh_config")
    installed = Path(env["HOME"]) / ".config" / "rig" / "ssh_config"
    assert installed.read_text().count("Host dev.my-proj.rig") == 1
    other = write_project(tmp_path / "elsewhere" / "My Proj", LOCAL)
    assert _rig(other, env, "fork", "dev").returncode == 0
    clash = _rig(other, env, "ssh-config", "--install")
    assert clash.returncode == 1
    assert str(project) in clash.stderr and str(other) in clash.stderr
    assert _rig(project, env, "ssh-config", "--uninstall").returncode == 0
    assert user_config.read_text() == "Host other\n  User me\n"
    assert not installed.exists()


def test_install_creates_a_private_ssh_config(tmp_path: Path) -> None:
    project, env = _setup(tmp_path)
    assert _rig(project, env, "ssh-config", "--install").returncode == 0
    user_config = Path(env["HOME"]) / ".ssh" / "config"
    assert stat.S_IMODE(os.stat(user_config).st_mode) == 0o600
    assert len(user_config.read_text().splitlines()) == 1


def test_a_control_path_too_long_for_a_socket_falls_back_to_a_private_tmp_dir(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", LOCAL)
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    env = env_with_rig({"HOME": str(tmp_path), "RIG_HOME": str(deep)})
    env.pop("XDG_RUNTIME_DIR", None)
    assert _rig(project, env, "fork", "dev").returncode == 0
    printed = _rig(project, env, "ssh-config")
    assert printed.returncode == 0, printed.stderr
    [control] = [
        line.split(None, 1)[1] for line in printed.stdout.splitlines() if line.strip().startswith("ControlPath")
    ]
    assert control == f"/tmp/rig-ssh-{os.getuid()}/%C"
    made = os.stat(f"/tmp/rig-ssh-{os.getuid()}")
    assert stat.S_IMODE(made.st_mode) == 0o700 and made.st_uid == os.getuid()
    # A short enough home keeps its own.
    home = tempfile.mkdtemp(prefix="rh-", dir="/tmp")
    env["RIG_HOME"] = home
    short = _rig(project, env, "ssh-config").stdout
    assert f"ControlPath {home}/ssh/control/%C" in short


def test_rm_ends_the_workspaces_master_so_a_new_one_of_that_name_is_reached(tmp_path: Path) -> None:
    project, env = _setup(tmp_path)
    config = tmp_path / "ssh_config"
    config.write_text(_rig(project, env, "ssh-config").stdout)
    ssh = ["ssh", "-F", str(config), "-o", "BatchMode=yes"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ssh, *args], env=env, capture_output=True, text=True, timeout=60)

    first = run("dev.my-proj.rig", "pwd")
    assert first.returncode == 0, first.stderr
    assert run("-O", "check", "dev.my-proj.rig").returncode == 0  # ControlPersist keeps it
    assert _rig(project, env, "rm", "dev", "--yes").returncode == 0
    assert run("-O", "check", "dev.my-proj.rig").returncode != 0
    assert _rig(project, env, "fork", "dev").returncode == 0
    config.write_text(_rig(project, env, "ssh-config").stdout)
    again = run("dev.my-proj.rig", "pwd")
    try:
        assert again.returncode == 0, again.stderr
        assert again.stdout != first.stdout  # the new workspace's machine, not the removed one's
    finally:
        run("-O", "exit", "dev.my-proj.rig")
