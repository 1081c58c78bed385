"""A private OpenSSH sshd on 127.0.0.1, the baseline of the connect rows: its own host key, config, user
key and PidFile in a directory of the fixture's, key authentication only; stopped by its PID."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

START_S = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Sshd:
    """A running sshd and the ``ssh`` options that reach it as this user with its key."""

    directory: Path
    port: int
    pid: int

    def client_options(self) -> list[str]:
        return [
            "-F",
            "/dev/null",
            "-i",
            str(self.directory / "user_key"),
            "-p",
            str(self.port),
            "-o",
            f"UserKnownHostsFile={self.directory / 'known_hosts'}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ControlPath=none",
            "-o",
            f"User={getpass.getuser()}",
        ]

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


def sshd_unavailable() -> str | None:
    if _sshd_path() is None:
        return "no sshd (openssh-server) to compare with"
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"no {tool} (openssh-client) on PATH"
    return None


def _sshd_path() -> str | None:
    return shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/usr/local/sbin:/sbin")


def start_sshd(directory: Path) -> Sshd:
    """Start sshd (it forks into the background and writes its PidFile); raises RuntimeError with its log."""
    directory.mkdir(parents=True)
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / name)], check=True)
    (directory / "authorized_keys").write_text((directory / "user_key.pub").read_text())
    host_public = (directory / "host_key.pub").read_text().split()
    port = free_port()
    (directory / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_public[0]} {host_public[1]}\n")
    config = directory / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {directory / 'host_key'}",
                f"PidFile {directory / 'sshd.pid'}",
                f"AuthorizedKeysFile {directory / 'authorized_keys'}",
                "AuthenticationMethods publickey",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                "UseDNS no",
                "",
            ]
        )
    )
    sshd = _sshd_path()
    assert sshd is not None
    log = directory / "sshd.log"
    done = subprocess.run([sshd, "-f", str(config), "-E", str(log)], capture_output=True, text=True, timeout=START_S)
    pid_file = directory / "sshd.pid"
    deadline = time.monotonic() + START_S
    while done.returncode == 0 and not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if done.returncode != 0 or not pid_file.exists():
        said = (done.stderr or (log.read_text() if log.exists() else "")).strip().splitlines()
        raise RuntimeError(f"sshd did not start: {said[-1] if said else 'no output'}")
    return Sshd(directory, port, int(pid_file.read_text().strip()))


__all__ = ["Sshd", "free_port", "sshd_unavailable", "start_sshd"]
