"""``hostRequirements``: what the configuration asks of the machine, compared with the Docker daemon's;
a shortfall is a warning in the task's or the fork's log, never a refusal (the reference does the same)."""

from __future__ import annotations

import logging
import os
from typing import Any

from rigcli.devcontainer.run_options import memory_bytes


def shortfalls(wanted: dict[str, Any], info: dict[str, Any], storage_free: int | None) -> list[str]:
    """What the daemon's ``/info`` (and the free bytes where its images live, when known) lacks."""
    found: list[str] = []
    cpus, have_cpus = wanted.get("cpus"), info.get("NCPU")
    if isinstance(cpus, int) and isinstance(have_cpus, int) and have_cpus < cpus:
        found.append(f"{cpus} CPUs (the Docker host has {have_cpus})")
    memory, have_memory = wanted.get("memory"), info.get("MemTotal")
    if isinstance(memory, str) and isinstance(have_memory, int) and have_memory < memory_bytes(memory, "memory"):
        found.append(f"{memory} of memory (the Docker host has {have_memory / 1024**3:.1f} GiB)")
    storage = wanted.get("storage")
    if isinstance(storage, str) and storage_free is not None and storage_free < memory_bytes(storage, "storage"):
        found.append(f"{storage} of storage (the Docker host has {storage_free / 1024**3:.1f} GiB free)")
    if wanted.get("gpu") not in (None, False, "optional"):
        found.append("a GPU (rig does not check for one)")
    return found


def warn_host_requirements(wanted: dict[str, Any] | None, box: Any, log: logging.Logger) -> None:
    """Log a warning naming each requirement the Docker host does not meet."""
    if not wanted:
        return
    info = box.client.json("GET", "/info", what="daemon info")
    missing = shortfalls(wanted, info, _free_bytes(info.get("DockerRootDir"), box))
    if missing:
        log.warning("hostRequirements not met: this configuration asks for %s", "; ".join(missing))


def _free_bytes(root: object, box: Any) -> int | None:
    """Free bytes where the daemon keeps its data, when that is this machine's (a unix socket)."""
    if not isinstance(root, str) or not str(box.client.host).startswith("unix://"):
        return None
    try:
        found = os.statvfs(root)
    except OSError:
        return None
    return found.f_bavail * found.f_frsize


__all__ = ["shortfalls", "warn_host_requirements"]
