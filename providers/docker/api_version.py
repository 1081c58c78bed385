"""Which Engine API version rig speaks: its own, unless the daemon is older (imports nothing heavy)."""

from __future__ import annotations

API_VERSION = "1.41"  # the newest API whose fields we use; Debian's docker.io 20.10 speaks exactly this
MIN_API_VERSION = "1.24"


def version_tuple(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return (0,)


def negotiate(server_version: str | None, ours: str = API_VERSION) -> str:
    """The API version to speak: min(server's, ours); an unversioned server is asked for ours."""
    if not server_version:
        return ours
    return min(server_version, ours, key=version_tuple)


__all__ = ["API_VERSION", "MIN_API_VERSION", "negotiate", "version_tuple"]
