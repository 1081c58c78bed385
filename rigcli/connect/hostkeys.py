"""A workspace's SSH host key (ed25519, an OpenSSH private key file, 0600, never in the state) and its
line in rig's own known_hosts; both made on first need and deleted by ``rig rm``."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from typing import TYPE_CHECKING

from rigcli.connect.places import alias_of, key_path, known_hosts_path, private_dir
from rigcli.connect.sshconfig import block, project_text
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import asyncssh
else:
    asyncssh = lazy_module("asyncssh")


_MASTER_EXIT_SECONDS = 5.0


def ensure_host_key(project_dir: str, workspace: str) -> str:
    """The key file's path, the key made if missing; rig's known_hosts holds its line either way."""
    path = key_path(project_dir, workspace)
    alias = alias_of(workspace, project_dir)
    if not os.path.exists(path):
        private_dir(os.path.dirname(path))
        key = asyncssh.generate_private_key("ssh-ed25519", comment=alias)
        temporary = f"{path}.{os.getpid()}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(key.export_private_key())
        os.replace(temporary, path)
        public = key.export_public_key().decode().split()
        _write_known_host(alias, f"{public[0]} {public[1]}")
    elif not _has_known_host(alias):
        public = asyncssh.read_private_key(path).export_public_key().decode().split()
        _write_known_host(alias, f"{public[0]} {public[1]}")
    return path


def remove_host_key(project_dir: str, workspace: str) -> None:
    """``rig rm``: the workspace's ssh master ends (a proxy still serving the removed machine must not
    answer for a new workspace of the same name), then the key file, the user remembered beside it and
    its known_hosts line go (nothing to do when none is there)."""
    path = key_path(project_dir, workspace)
    _end_master(project_dir, workspace, f"{path}.user")
    for leftover in (path, f"{path}.user"):
        if os.path.exists(leftover):
            os.unlink(leftover)
    _write_known_host(alias_of(workspace, project_dir), None)


def _end_master(project_dir: str, workspace: str, remembered_user: str) -> None:
    """``ssh -O exit`` with the workspace's own block, so ssh finds the same control socket (%C)."""

    program = shutil.which("ssh")
    if program is None or not os.path.exists(remembered_user):
        return  # no ssh here, or no block was ever written for it: no master either
    with open(remembered_user, encoding="utf-8") as handle:
        user = handle.read().strip() or "root"
    alias = alias_of(workspace, project_dir)
    with tempfile.NamedTemporaryFile("w", suffix=".conf", encoding="utf-8") as config:
        config.write(project_text([block(project_dir, workspace, alias, user)]))
        config.flush()
        # On failure it ends by itself within ControlPersist; nothing of the workspace is left for it.
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [program, "-F", config.name, "-O", "exit", alias],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_MASTER_EXIT_SECONDS,
            )


def _lines() -> list[str]:
    try:
        with open(known_hosts_path(), encoding="utf-8") as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return []


def _has_known_host(alias: str) -> bool:
    return any(line.split(" ", 1)[0] == alias for line in _lines())


def _write_known_host(alias: str, key: str | None) -> None:
    """Replace ``alias``'s line (None: take it out), atomically."""
    lines = [line for line in _lines() if line.split(" ", 1)[0] != alias]
    if key is not None:
        lines.append(f"{alias} {key}")
    elif not os.path.exists(known_hosts_path()):
        return
    path = known_hosts_path()
    private_dir(os.path.dirname(path))
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write("".join(f"{line}\n" for line in lines))
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


__all__ = ["ensure_host_key", "remove_host_key"]
