"""OpenSSH ``Host`` blocks for a project's workspaces, and installing them: one rig-owned file that
``~/.ssh/config`` includes through a single ``Include`` line at its top (no other line of it touched).

The rig-owned file holds each installed project's blocks between ``# rig project: DIR`` and ``# rig
end: DIR`` markers, so installing a project again replaces only its own blocks and uninstalling
takes them out (and the ``Include`` line with the last of them).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

from rigcli.connect.places import control_dir, installed_config_path, known_hosts_path, private_dir, user_ssh_config
from rigcli.errors import RigError
from rigcli.speed.records import lazy_dataclass

# AES-GCM first: the proxy's SSH (asyncssh, in Python) moves bulk data about twice as fast with it as with
# OpenSSH's own first choice, chacha20-poly1305 (one AEAD call per packet, not four cipher setups).
CIPHERS = "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes256-ctr"


@lazy_dataclass(frozen=True)
class HostBlock:
    workspace: str
    alias: str
    user: str
    proxy_command: str
    known_hosts: str

    def to_json(self) -> dict[str, str]:
        return {
            "workspace": self.workspace,
            "alias": self.alias,
            "user": self.user,
            "proxy_command": self.proxy_command,
            "known_hosts": self.known_hosts,
        }

    def text(self) -> str:
        control = os.path.join(control_dir(), "%C")
        lines = [
            f"Host {self.alias}",
            f"  HostName {self.alias}",
            f"  User {self.user}",
            f"  ProxyCommand {self.proxy_command.replace('%', '%%')}",
            f"  HostKeyAlias {self.alias}",
            f"  UserKnownHostsFile {_quoted(self.known_hosts)}",
            "  StrictHostKeyChecking yes",
            "  SendEnv LANG LC_*",
            f"  Ciphers {CIPHERS}",
            "  ControlMaster auto",
            f"  ControlPath {_quoted(control)}",
            "  ControlPersist 10m",
        ]
        return "\n".join(lines) + "\n"


def _quoted(path: str) -> str:
    return f'"{path}"' if any(char.isspace() for char in path) else path


def rig_command() -> list[str]:
    """The absolute command line of this rig."""
    launched = sys.argv[0] if sys.argv else ""
    if os.path.basename(launched) == "rig" and os.path.exists(launched):
        return [os.path.abspath(launched)]
    found = shutil.which("rig")
    return [os.path.abspath(found)] if found else [sys.executable, "-m", "rigcli"]


def proxy_command(project_dir: str, workspace: str) -> str:
    return shlex.join([*rig_command(), "-C", os.path.abspath(project_dir), "ssh-proxy", workspace])


def block(project_dir: str, workspace: str, alias: str, user: str) -> HostBlock:
    private_dir(control_dir())  # ssh makes no directory for its control socket
    return HostBlock(workspace, alias, user, proxy_command(project_dir, workspace), known_hosts_path())


def project_text(blocks: list[HostBlock]) -> str:
    return "\n".join(item.text() for item in blocks)


# -- installing ----------------------------------------------------------------------------------


def _begin(project_dir: str) -> str:
    return f"# rig project: {project_dir}"


def _end(project_dir: str) -> str:
    return f"# rig end: {project_dir}"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def _write(path: str, text: str) -> None:
    private_dir(os.path.dirname(path))
    temporary = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    if os.path.exists(path):
        os.chmod(temporary, os.stat(path).st_mode & 0o7777)
    os.replace(temporary, path)


def _sections(text: str) -> list[tuple[str | None, list[str]]]:
    """The installed file as (project dir or None for stray lines, lines)."""
    sections: list[tuple[str | None, list[str]]] = []
    current: tuple[str | None, list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("# rig project: "):
            current = (line[len("# rig project: ") :], [])
            sections.append(current)
        elif line.startswith("# rig end: ") and current is not None:
            current = None
        elif current is not None:
            current[1].append(line)
        elif line.strip():
            sections.append((None, [line]))
    return sections


def _aliases(lines: list[str]) -> set[str]:
    return {line.split()[1] for line in lines if line.startswith("Host ") and len(line.split()) > 1}


def include_line() -> str:
    return f"Include {_quoted(installed_config_path())}"


def install(project_dir: str, blocks: list[HostBlock]) -> bool:
    """Put the project's blocks in the rig-owned file and the Include line atop ~/.ssh/config; True when
    ~/.ssh/config was changed. Refuses an alias another installed project has."""
    project_dir = os.path.abspath(project_dir)
    sections = _sections(_read(installed_config_path()))
    mine = {item.alias for item in blocks}
    for other, lines in sections:
        if other is not None and other != project_dir:
            clash = sorted(mine & _aliases(lines))
            if clash:
                raise RigError(
                    f"Host {clash[0]} is already installed for the project in {other}; this project ({project_dir}) "
                    "has the same name: rename one directory, or rig ssh-config --uninstall there first"
                )
    kept = [(other, lines) for other, lines in sections if other != project_dir]
    kept.append((project_dir, project_text(blocks).splitlines()))
    _write(installed_config_path(), _render(kept))
    return _ensure_include()


def uninstall(project_dir: str) -> bool:
    """Take the project's blocks out; the Include line goes with the last project. True when
    ~/.ssh/config was changed."""
    project_dir = os.path.abspath(project_dir)
    path = installed_config_path()
    sections = [(other, lines) for other, lines in _sections(_read(path)) if other != project_dir]
    if any(other is not None for other, _ in sections):
        _write(path, _render(sections))
        return False
    if os.path.exists(path):
        os.unlink(path)
    return _remove_include()


def installed(project_dir: str) -> bool:
    project_dir = os.path.abspath(project_dir)
    return any(other == project_dir for other, _ in _sections(_read(installed_config_path()))) and (
        include_line() in _read(user_ssh_config()).splitlines()
    )


def installed_alias(project_dir: str, alias: str) -> bool:
    """``alias`` is among the project's installed blocks, and ``~/.ssh/config`` includes them."""
    project_dir = os.path.abspath(project_dir)
    sections = _sections(_read(installed_config_path()))
    return any(other == project_dir and alias in _aliases(lines) for other, lines in sections) and (
        include_line() in _read(user_ssh_config()).splitlines()
    )


def _render(sections: list[tuple[str | None, list[str]]]) -> str:
    parts = ["# Written by rig ssh-config --install; rig replaces what is between its markers.\n"]
    for other, lines in sections:
        if other is None:
            continue
        parts.append(_begin(other) + "\n" + "".join(f"{line}\n" for line in lines) + _end(other) + "\n")
    return "".join(parts)


def _ensure_include() -> bool:
    path = user_ssh_config()
    text = _read(path)
    line = include_line()
    if line in text.splitlines():
        return False
    private_dir(os.path.dirname(path))
    if not os.path.exists(path):
        _write(path, line + "\n")
        return True
    _write(path, line + "\n" + text)
    return True


def _remove_include() -> bool:
    path = user_ssh_config()
    if not os.path.exists(path):
        return False
    text = _read(path)
    line = include_line()
    lines = text.split("\n")
    if line not in lines:
        return False
    lines.remove(line)
    _write(path, "\n".join(lines))
    return True


__all__ = [
    "HostBlock",
    "block",
    "install",
    "installed",
    "installed_alias",
    "project_text",
    "proxy_command",
    "uninstall",
]
