"""The order features install in, as the reference implementation computes it.

Rounds: each round takes every feature whose ``dependsOn`` and ``installsAfter`` are all installed
already (a soft dependency on a feature not in the set is dropped), keeps those of the highest
``overrideFeatureInstallOrder`` priority, and installs them sorted (by their user-given key across
kinds; a local folder by its path, an OCI feature by its resource, tag and digest). A round that
can take nothing means a cycle: an error naming what is left.
"""

from __future__ import annotations

from functools import cmp_to_key
from typing import Any

from rigcli.errors import ConfigError

Feature = dict[str, Any]  # features.py's resolved feature (plain JSON)


def install_order(features: list[Feature], override: list[str], where: str) -> list[Feature]:
    """``features`` in the order they install; raises ConfigError on a cycle."""
    priorities = _priorities(features, override)
    pending = list(features)
    for item in pending:  # a soft dependency on a feature that is not there does not hold anything back
        item["installs_after"] = [dep for dep in item["installs_after"] if any(_matches(n, dep) for n in pending)]
    done: list[Feature] = []
    while pending:
        ready = [item for item in pending if _satisfied(item, done)]
        if not ready:
            names = ", ".join(item["key"] for item in pending)
            raise ConfigError(f"{where}: features depend on each other in a cycle ({names})")
        top = max(priorities[id(item)] for item in ready)
        ready = sorted((item for item in ready if priorities[id(item)] == top), key=cmp_to_key(_compare))
        done.extend(ready)
        pending = [item for item in pending if all(item is not taken for taken in ready)]
    return done


def _priorities(features: list[Feature], override: list[str]) -> dict[int, int]:
    priorities = {id(item): 0 for item in features}
    for position, wanted in enumerate(override):
        priority = len(override) - position
        for item in features:
            if _matches(item, wanted):
                priorities[id(item)] = max(priorities[id(item)], priority)
    return priorities


def _satisfied(item: Feature, done: list[Feature]) -> bool:
    hard = all(any(_matches(installed, dep) for installed in done) for dep in item["depends_on"])
    soft = all(any(_matches(installed, dep) for installed in done) for dep in item["installs_after"])
    return hard and soft


def _matches(item: Feature, wanted: str) -> bool:
    """Whether ``wanted`` (a feature's key, its resource without tag or digest, or its folder) names ``item``."""
    bare = _without_version(wanted)
    return wanted == item["key"] or bare == item.get("resource") or bare == _without_version(item["key"])


def _without_version(ref: str) -> str:
    if "@" in ref:
        return ref.split("@", 1)[0]
    head, _, tail = ref.rpartition(":")
    return head if head and "/" not in tail else ref


def _compare(a: Feature, b: Feature) -> int:
    if a["kind"] != b["kind"]:
        return _cmp(a["key"], b["key"])
    if a["kind"] == "local":
        return _cmp(a["folder"], b["folder"])
    for field in ("resource", "tag", "digest"):
        found = _cmp(a.get(field) or "", b.get(field) or "")
        if found:
            return found
    return 0


def _cmp(a: str, b: str) -> int:
    return (a > b) - (a < b)


__all__ = ["install_order"]
