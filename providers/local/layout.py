"""Where the local provider keeps machines and snapshots, and whether one is there: rules on plain paths.

``store.py`` (a load's controller) and ``status.py`` (``rig plan``/``rig ls`` answered without one)
ask the same rules: a machine is ``<state dir>/machines/<m-id>``; a snapshot is complete when its
``snapshot.json`` names it and its ``files`` directory exists.
"""

from __future__ import annotations

import os

from rigcli.speed.json_lite import loads

PROVIDER_ID = "local"
SNAPSHOT_KIND = "dirSnapshot"
MARKER = "snapshot.json"  # written last, inside the temp dir, before the rename: present means complete
FILES = "files"
_HEX = frozenset("0123456789abcdef")


def is_id(value: str, prefix: str) -> bool:
    """Whether ``value`` is an id rig makes: ``<prefix>-`` and 12 hex digits (``m`` machine, ``s`` snapshot)."""
    return len(value) == 14 and value.startswith(f"{prefix}-") and set(value[2:]) <= _HEX


def machine_dir(root: str, machine_id: str) -> str | None:
    """Where machine ``machine_id`` lives (or lived) under ``root``; None for an id rig would not make."""
    return os.path.join(root, "machines", machine_id) if is_id(machine_id, "m") else None


def snapshot_dir(root: str, snapshot_id: str) -> str | None:
    """Where snapshot ``snapshot_id`` lives under ``root``; None for a name that is no directory of it."""
    if not snapshot_id or "/" in snapshot_id or snapshot_id.startswith("."):
        return None
    return os.path.join(root, "snapshots", snapshot_id)


def snapshot_complete(root: str, snapshot_id: str) -> bool:
    """Whether the snapshot was written whole: its marker names it, and its files are there."""
    base = snapshot_dir(root, snapshot_id)
    if base is None:
        return False
    try:
        with open(os.path.join(base, MARKER), encoding="utf-8") as handle:
            marker = loads(handle.read())
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("id") == snapshot_id and os.path.isdir(os.path.join(base, FILES))


__all__ = [
    "FILES",
    "MARKER",
    "PROVIDER_ID",
    "SNAPSHOT_KIND",
    "is_id",
    "machine_dir",
    "snapshot_complete",
    "snapshot_dir",
]
