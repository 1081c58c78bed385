"""A workspace's SSH host key (ed25519, an OpenSSH private key file, 0600, never in the state) and its
line in rig's own known_hosts; both made on first need and deleted by ``rig rm``."""

from __future__ import annotations

import os

from rigcli.connect.places import alias_of, key_path, known_hosts_path, private_dir


def ensure_host_key(project_dir: str, workspace: str) -> str:
    """The key file's path, the key made if missing; rig's known_hosts holds its line either way."""
    path = key_path(project_dir, workspace)
    alias = alias_of(workspace, project_dir)
    if not os.path.exists(path):
        import asyncssh

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
        import asyncssh

        public = asyncssh.read_private_key(path).export_public_key().decode().split()
        _write_known_host(alias, f"{public[0]} {public[1]}")
    return path


def remove_host_key(project_dir: str, workspace: str) -> None:
    """``rig rm``: the key file and its known_hosts line go (nothing to do when neither is there)."""
    path = key_path(project_dir, workspace)
    if os.path.exists(path):
        os.unlink(path)
    _write_known_host(alias_of(workspace, project_dir), None)


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
