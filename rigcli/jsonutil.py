"""Canonical JSON, version-tagged content hashes and JSON-value validation with key paths.

Every persisted hash is ``tagged_hash(tag, value)``: SHA-256 over the canonical JSON of
``{"tag": tag, "value": value}``. Canonical JSON sorts keys, uses compact separators, keeps
non-ASCII as UTF-8 and rejects NaN/Infinity. Changing the canonical form means changing every
tag that uses it, because old hashes must never be compared with new ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TypeAlias, cast, overload

from rigcli.speed.digests import sha256

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""A value made only of dict (str keys), list, str, int, float (finite), bool and None."""
JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object: what a task context, a stored record or an artifact ref is."""


# One encoder for every call: json.dumps with options makes a new one each time (a cached plan
# encodes a few hundred values).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(value: JsonValue) -> str:
    return _CANONICAL.encode(value)


def tagged_hash(tag: str, value: JsonValue) -> str:
    digest = sha256(canonical_json({"tag": tag, "value": value}).encode("utf-8")).hexdigest()
    return f"sha256-{digest}"


# Deeper than any real context; deeper values would exhaust Python's recursion limit on the way.
MAX_DEPTH = 400


def find_non_json(value: object, path: str = "") -> str | None:
    """Return the key path of the first value that is not plain JSON, or None if all of it is.

    The root itself is reported as ``<root>``. A container that contains itself, or values nested
    deeper than MAX_DEPTH, are not JSON either: the path then says so (``a.b (contains itself)``).
    """
    return _find_non_json(value, path, set(), 0)


def _find_non_json(value: object, path: str, active: set[int], depth: int) -> str | None:
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "<root>")
    if not isinstance(value, (Mapping, list, tuple)):
        return path or "<root>"
    if id(value) in active:
        return f"{path or '<root>'} (contains itself)"
    if depth >= MAX_DEPTH:
        return f"{path or '<root>'} (nested more than {MAX_DEPTH} levels deep)"
    active.add(id(value))
    try:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    return f"{path}.{key!r}" if path else repr(key)
                bad = _find_non_json(item, f"{path}.{key}" if path else key, active, depth + 1)
                if bad is not None:
                    return bad
            return None
        for index, item in enumerate(value):
            bad = _find_non_json(item, f"{path}[{index}]", active, depth + 1)
            if bad is not None:
                return bad
        return None
    finally:
        active.discard(id(value))


@overload
def to_plain_json(value: Mapping[str, object]) -> JsonObject: ...
@overload
def to_plain_json(value: object) -> JsonValue: ...
def to_plain_json(value: object) -> JsonValue:
    """Copy a JSON-shaped value into plain dicts and lists (tuples and mappings included).

    Leaves are passed through unchecked: callers run ``find_non_json`` first.
    """
    if isinstance(value, Mapping):
        return {str(key): to_plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain_json(item) for item in value]
    return cast("JsonValue", value)  # a JSON scalar: callers checked with find_non_json


__all__ = ["JsonObject", "JsonValue", "canonical_json", "find_non_json", "tagged_hash", "to_plain_json"]
