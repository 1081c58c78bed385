"""Where the connect commands keep their files: host keys, rig's known_hosts, control sockets, the
installed ssh config, running forwards; and a workspace's SSH alias."""

from __future__ import annotations

import hashlib
import os

from rigcli.layout import ssh_alias
from rigcli.state.paths import rig_home_path


def alias_of(workspace: str, project_dir: str) -> str:
    """``WS.PROJECT.rig``: the Host an ssh config block gives a workspace (the rule is ``layout.ssh_alias``)."""
    return ssh_alias(workspace, project_dir)


def ssh_home() -> str:
    return os.path.join(rig_home_path(), "ssh")


def known_hosts_path() -> str:
    """rig's own known_hosts file (never the user's)."""
    return os.path.join(ssh_home(), "known_hosts")


def key_path(project_dir: str, workspace: str) -> str:
    """The workspace's host key: one per project directory and workspace name."""
    digest = hashlib.sha256(os.path.abspath(project_dir).encode()).hexdigest()[:12]
    return os.path.join(ssh_home(), "host_keys", f"{alias_of(workspace, project_dir)}-{digest}")


def control_dir() -> str:
    """Where ssh's ControlMaster sockets live: ``$XDG_RUNTIME_DIR/rig/ssh``, else under rig's home."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "rig", "ssh")
    return os.path.join(ssh_home(), "control")


def forwards_dir() -> str:
    """One file per running ``rig forward`` (its pid, workspace and ports), for ``rig open --editor browser``."""
    return os.path.join(ssh_home(), "forwards")


def installed_config_path() -> str:
    """The rig-owned file ``~/.ssh/config`` includes: the installed projects' Host blocks."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "rig", "ssh_config")


def user_ssh_config() -> str:
    return os.path.join(os.path.expanduser("~"), ".ssh", "config")


def private_dir(path: str) -> str:
    """``path`` made (0700) if missing; returned."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


__all__ = [
    "alias_of",
    "control_dir",
    "forwards_dir",
    "installed_config_path",
    "key_path",
    "known_hosts_path",
    "private_dir",
    "ssh_home",
    "user_ssh_config",
]
