"""The ``rig.providers`` entry points, remembered in $RIG_HOME while the installed packages stay the same.

Asking importlib.metadata reads every installed distribution's metadata (and imports ``email``,
``zipfile``, ``csv``, ...): ~17 ms here, a sixth of a cached ``rig plan`` and of a ``rig fork``,
for an answer that only changes when packages are installed, removed or upgraded. Every one of
those adds, removes or rewrites a ``*.dist-info`` / ``*.egg-info`` directory and its
``entry_points.txt``; the index is keyed by what a few ``listdir`` and ``stat`` calls see of them
on ``sys.path`` (~1 ms), so any such change, or another ``sys.path``, means a fresh scan. The
file (``$RIG_HOME/cache/provider-entry-points.json``) is only a copy: unreadable, foreign or
stale, it is ignored and rewritten; a home that cannot be written to just means no copy.
"""

from __future__ import annotations

import os
import sys

from rigcli.speed.digests import sha256
from rigcli.speed.json_lite import loads

# Not typing.TYPE_CHECKING, and no pathlib: rig shell/exec answered from the cache reads this index and
# imports neither (pathlib brings urllib.parse: ~18 M instructions).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

PROVIDERS_GROUP = "rig.providers"
FORMAT = "rig.provider-entry-points/1"
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
# importlib.metadata's own grammar for an entry point value: "module[:attr.path] [extras]".
# compiled on first use, by re's own cache: a remembered index is read without it
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


def installed_key() -> str:
    """A digest of the metadata directories on ``sys.path`` and their entry-point files' mtimes."""
    seen: list[object] = []
    for entry in sys.path:
        place = os.path.abspath(entry or ".")
        try:
            names = sorted(name for name in os.listdir(place) if name.endswith(_METADATA_SUFFIXES))
        except OSError:  # not a directory (a zip, or gone): its own mtime stands for its contents
            try:  # noqa: SIM105 - contextlib is not imported on this path
                seen.append([place, os.stat(place).st_mtime_ns])
            except OSError:
                pass
            continue
        stamps: list[object] = []
        for name in names:
            try:
                stamps.append([name, os.stat(os.path.join(place, name, "entry_points.txt")).st_mtime_ns])
            except OSError:
                stamps.append([name, None])
        seen.append([place, stamps])
    # repr, not json: lists of strings, ints and None spell themselves one way, and json imports re.
    return sha256(repr([FORMAT, seen]).encode()).hexdigest()


def scan(group: str) -> dict[str, str]:
    """``name -> value`` of ``group``'s entry points, first distribution on ``sys.path`` wins."""
    from importlib.metadata import entry_points

    found: dict[str, str] = {}
    for entry in entry_points(group=group):
        found.setdefault(entry.name, entry.value)
    return found


def entry_point_values(group: str, cache_file: str | Path | None) -> dict[str, str]:
    """``group``'s entry points, from the cache file when it matches what is installed."""
    key = installed_key()
    if cache_file is not None:
        remembered = _read(cache_file, key, group)
        if remembered is not None:
            return remembered
    found = scan(group)
    if cache_file is not None:
        _write(cache_file, {"format": FORMAT, "key": key, "groups": {group: found}})
    return found


def load(value: str) -> object:
    """What an entry point value names (``module:attr.path``), as ``EntryPoint.load`` would."""
    module, attr = _plain(value) or _parsed(value)
    __import__(module)  # not importlib.import_module: the same for an absolute name, without importlib
    loaded: object = sys.modules[module]
    for part in filter(None, attr.split(".")):
        loaded = getattr(loaded, part)
    return loaded


_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


def _plain(value: str) -> tuple[str, str] | None:
    """``module:attr`` of the usual spelling (no spaces, no extras), read without re; else None."""
    module, colon, attr = value.partition(":")
    if not module or (colon and not attr):
        return None
    if _NAME_CHARACTERS.issuperset(module) and _NAME_CHARACTERS.issuperset(attr):
        return module, attr
    return None


def _parsed(value: str) -> tuple[str, str]:
    import re

    match = re.match(_VALUE, value)
    if match is None:
        raise ValueError(f"malformed entry point {value!r}")
    return match.group("module"), match.group("attr") or ""


def _read(path: str | Path, key: str, group: str) -> dict[str, str] | None:
    """The remembered entries when the file is rig's, of this ``key``, and well formed; else None."""
    try:
        with open(path, encoding="utf-8") as remembered:
            stored = loads(remembered.read())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("format") != FORMAT or stored.get("key") != key:
        return None
    groups = stored.get("groups")
    entries = groups.get(group) if isinstance(groups, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(value, str) for value in entries.values()):
        return None
    return {str(name): value for name, value in entries.items()}


def _write(path: str | Path, data: dict[str, object]) -> None:
    import contextlib  # only a miss writes
    import json
    import tempfile

    with contextlib.suppress(OSError):
        place = os.path.dirname(os.fspath(path))
        os.makedirs(place, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".entry-points-", dir=place)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(data, out, sort_keys=True)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


__all__ = ["FORMAT", "PROVIDERS_GROUP", "entry_point_values", "installed_key", "load", "scan"]
