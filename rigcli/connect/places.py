"""Where the connect commands keep their files: host keys, rig's known_hosts, control sockets, the
installed ssh config, running forwards; and a workspace's SSH alias."""

from __future__ import annotations

import hashlib
import os
import stat

from rigcli.errors import RigError
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


# A unix socket's path holds 107 bytes; ssh's %C is 40 and it binds "PATH.<16 random>" first.
_SOCKET_ROOM = 107 - len("/") - 40 - len(".0123456789abcdef")


def control_dir() -> str:
    """Where ssh's ControlMaster sockets live: ``$XDG_RUNTIME_DIR/rig/ssh``, else under rig's home, else (a
    path too long for a unix socket there) ``/tmp/rig-ssh-UID``, which must be this user's own."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    for candidate in (
        os.path.join(runtime, "rig", "ssh") if runtime and os.path.isdir(runtime) else "",
        os.path.join(ssh_home(), "control"),
    ):
        if candidate and len(candidate) <= _SOCKET_ROOM:
            return candidate
    fallback = f"/tmp/rig-ssh-{os.getuid()}"
    try:
        found = os.lstat(fallback)
    except FileNotFoundError:
        return fallback
    if found.st_uid != os.getuid() or not stat.S_ISDIR(found.st_mode) or found.st_mode & 0o077:
        raise RigError(f"{fallback} (for ssh's control sockets) is not a private directory of this user's")
    return fallback


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
