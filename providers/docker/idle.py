"""When a docker workspace's container was last used, for ``workspace(idle_stop=...)``.

"Used" is what the daemon can show without rig keeping its own record: the container's start,
and any process running in it besides the two rig starts it with (docker's init and the idle
keep-alive) — an exec'd shell or command, or a server the user left running. While one runs,
the container is in use now; once none does, it was last used when the reaper last saw one (the
reaper then looks again ``idle_stop`` later) or, never seen in use, when it was started. A
stopped or paused container has nothing to stop: None.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from providers.docker.client import DockerClient

OWN_PROCESSES = 2  # docker-init and the keep-alive command (HostConfig.Init: see start_container)


def _started_at(text: object) -> str:
    """Docker's ``StartedAt`` (nanoseconds, ``Z``) as ISO-8601 UTC with microseconds."""
    if not isinstance(text, str) or not text:
        return datetime.now(timezone.utc).isoformat()
    head, _, rest = text.rstrip("Z").partition(".")
    fraction = (rest.split("+")[0] + "000000")[:6]
    return datetime.fromisoformat(f"{head}.{fraction}").replace(tzinfo=timezone.utc).isoformat()


def last_used(client: DockerClient, container: str) -> str | None:
    """The last sign of use of ``container`` (its id or name), now if in use, None if not running."""
    inspected: dict[str, Any] = client.json("GET", f"/containers/{container}/json", what="container inspect")
    state = inspected.get("State") or {}
    if not state.get("Running") or state.get("Paused"):
        return None
    top: dict[str, Any] = client.json("GET", f"/containers/{container}/top", what="container top")
    if len(top.get("Processes") or []) > OWN_PROCESSES:
        return datetime.now(timezone.utc).isoformat()
    return _started_at(state.get("StartedAt"))


__all__ = ["OWN_PROCESSES", "last_used"]
