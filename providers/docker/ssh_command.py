"""The ssh command rig runs for an ``ssh://`` daemon, as the docker CLI does, and what its failures mean.

Both ways of speaking to such a daemon use it: rig's own connections (``rawconn``) and httpx's
(``ssh``); this module imports neither httpx nor anything heavy. ssh's ``ConnectTimeout`` is rig's
connect bound (RIG_CONNECT_TIMEOUT, ``rigcli/timeouts.py``): it covers the TCP connection and
ssh's own handshake, so a host that accepts and never speaks ends the ssh process in time.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from rigcli.timeouts import Bound, connect_bound

_UNREACHABLE = (
    "could not resolve hostname",
    "connection refused",
    "timed out",
    "no route to host",
    "network is unreachable",
    "connection closed by",
    "connection reset",
    "name or service not known",
)


def ssh_argv(host: str, connecting: Bound | None = None) -> list[str]:
    """The command the docker CLI runs for ``ssh://[user@]host[:port]``, plus BatchMode and the connect bound
    (``connecting``, default RIG_CONNECT_TIMEOUT)."""
    parts = urlsplit(host)
    connecting = connecting or connect_bound()
    seconds = max(1, -int(-connecting.seconds // 1))  # ssh takes whole seconds: rounded up, at least 1
    argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={seconds}", "-T"]
    if parts.username:
        argv += ["-l", parts.username]
    if parts.port:
        argv += ["-p", str(parts.port)]
    return [*argv, "--", _hostname(parts.netloc), "docker", "system", "dial-stdio"]


def _hostname(netloc: str) -> str:
    """The host as written: urlsplit's ``hostname`` lowercases, and ssh config Host patterns are case-sensitive."""
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        return hostport[1 : hostport.find("]")]
    return hostport.rpartition(":")[0] if ":" in hostport else hostport


def describe_failure(host: str, returncode: int, stderr: str, connecting: Bound | None = None) -> str:
    """One line saying what went wrong with ssh, from its exit status and what it printed (and, when ssh
    gave up waiting, the bound it had: ``connecting``)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("Warning: Permanently added")]
    detail = lines[-1] if lines else f"ssh exited with status {returncode}"
    text = stderr.lower()
    hint = ""
    if "permission denied" in text or "too many authentication failures" in text:
        what = "ssh authentication failed"
        hint = "; rig runs ssh with BatchMode=yes, so the key must come from ssh-agent or ~/.ssh/config"
    elif "host key verification failed" in text or "host identification has changed" in text:
        what = "ssh host key verification failed"
        hint = f"; connect once with `ssh {urlsplit(host).netloc}` to check and accept the host key"
    elif any(marker in text for marker in _UNREACHABLE):
        what = "unreachable"
        if connecting is not None and "timed out" in text:
            detail += f"; ssh's ConnectTimeout is {connecting}"
    elif returncode == 127 or "command not found" in text:
        what = "no docker CLI on the remote host (rig runs `docker system dial-stdio` there)"
    else:
        what = f"ssh failed with exit status {returncode}"
    return f"Cannot reach the Docker daemon at {host}: {what} ({detail}){hint}"


__all__ = ["describe_failure", "ssh_argv"]
