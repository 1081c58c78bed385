"""What changed in a local machine since it was made: its files against the snapshot it was copied from.

A machine is a copy that keeps every file's mtime (``cp -a``), so a file is unchanged while its
type, mode, size and mtime (and a link's target) are the snapshot's. A file the snapshot lacks was
added, one the machine lacks was deleted; a directory only one side has is named once, not file
by file. A machine made empty has nothing to compare with: all it holds was added. One whose
snapshot is gone falls back to the files written after the machine was made (mtime past the
second of its creation).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from datetime import datetime

from rigcli.provider_api import MachineChange


def changed_files(machine: str, snapshot: str | None, created_at: str | None) -> list[MachineChange]:
    """The paths (relative to ``machine``) that differ from ``snapshot``; with no snapshot, the files
    newer than ``created_at`` (ISO 8601), or every path when that is None too."""
    if not os.path.isdir(machine):
        return []  # gone: nothing in it to lose
    if snapshot is not None and os.path.isdir(snapshot):
        return [*_against(machine, snapshot), *_deleted(machine, snapshot)]
    since = None if created_at is None else datetime.fromisoformat(created_at).timestamp() + 1
    return [
        MachineChange("added", relative)
        for relative, entry in _entries(machine, "")
        if not entry.is_dir(follow_symlinks=False) and (since is None or _mtime(entry) >= since)
    ]


def _against(machine: str, snapshot: str) -> Iterator[MachineChange]:
    for relative, entry in _entries(machine, "", descend=lambda rel: os.path.isdir(os.path.join(snapshot, rel))):
        try:
            before = os.lstat(os.path.join(snapshot, relative))
        except FileNotFoundError:
            yield MachineChange("added", relative + ("/" if entry.is_dir(follow_symlinks=False) else ""))
            continue
        now = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(now.st_mode) and stat.S_ISDIR(before.st_mode):
            continue  # its entries are compared one by one
        if _differs(now, before, os.path.join(machine, relative), os.path.join(snapshot, relative)):
            yield MachineChange("changed", relative)


def _deleted(machine: str, snapshot: str) -> Iterator[MachineChange]:
    for relative, entry in _entries(snapshot, "", descend=lambda rel: os.path.isdir(os.path.join(machine, rel))):
        if not os.path.lexists(os.path.join(machine, relative)):
            yield MachineChange("deleted", relative + ("/" if entry.is_dir(follow_symlinks=False) else ""))


def _differs(now: os.stat_result, before: os.stat_result, path: str, original: str) -> bool:
    if (now.st_mode, now.st_size, now.st_mtime_ns) != (before.st_mode, before.st_size, before.st_mtime_ns):
        return True
    return stat.S_ISLNK(now.st_mode) and os.readlink(path) != os.readlink(original)


def _entries(
    root: str, relative: str, descend: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every entry under ``root/relative``, depth first; into a directory only while ``descend(rel)``
    holds (when given)."""
    try:
        with os.scandir(os.path.join(root, relative) if relative else root) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = f"{relative}/{entry.name}" if relative else entry.name
        yield path, entry
        if entry.is_dir(follow_symlinks=False) and (descend is None or descend(path)):
            yield from _entries(root, path, descend)


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


__all__ = ["changed_files"]
