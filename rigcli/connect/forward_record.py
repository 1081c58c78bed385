"""The record of each running ``rig forward`` (one JSON file per process under rig's home), so ``rig open
--editor browser`` can find the local URL of a workspace's port. A record whose process is gone (killed
with SIGKILL) is ignored, and removed by the next reader."""

from __future__ import annotations

import contextlib
import json
import os

from rigcli.connect.places import forwards_dir, private_dir


def _path(pid: int) -> str:
    return os.path.join(forwards_dir(), f"{pid}.json")


def write_record(project_dir: str, workspace: str, forwards: list[dict[str, object]]) -> str:
    """This process's forwards of ``workspace``, written whole (a reader never sees half of it)."""
    path = _path(os.getpid())
    private_dir(forwards_dir())
    record = {"pid": os.getpid(), "project_dir": os.path.abspath(project_dir), "workspace": workspace}
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump({**record, "forwards": forwards}, handle)
    os.replace(temporary, path)
    return path


def remove_record(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_forwards(project_dir: str, workspace: str) -> list[dict[str, object]]:
    """Every forward a live ``rig forward`` of this project's ``workspace`` serves, oldest process first."""
    try:
        names = os.listdir(forwards_dir())
    except OSError:
        return []
    project = os.path.abspath(project_dir)
    found: list[tuple[float, list[dict[str, object]]]] = []
    for name in names:
        if not name.endswith(".json"):
            continue
        path = os.path.join(forwards_dir(), name)
        try:
            with open(path, encoding="utf-8") as handle:
                record = json.load(handle)
            started = os.stat(path).st_mtime
        except (OSError, ValueError):
            continue
        pid = record.get("pid")
        if not isinstance(pid, int) or not _alive(pid):
            remove_record(path)
            continue
        if record.get("project_dir") == project and record.get("workspace") == workspace:
            found.append((started, list(record.get("forwards") or [])))
    return [forward for _, forwards in sorted(found, key=lambda item: item[0]) for forward in forwards]


__all__ = ["remove_record", "running_forwards", "write_record"]
