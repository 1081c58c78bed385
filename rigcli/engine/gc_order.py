"""The order ``rig gc`` removes things in, and what a kept thing keeps.

A resource may name what it was made from in its resource's ``parent`` (a docker snapshot image
committed from a container of another snapshot image names that image). A daemon refuses to delete
a parent while a child exists ("image has dependent child images"), so:

- a candidate that a kept candidate was made from is kept too (removing it could only fail, and
  would fail again at every gc);
- children are removed before their parents, and exec sessions (``EXEC_EFFECT``) before anything,
  since ending one needs the machine it runs in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from rigcli.provider_api import EXEC_EFFECT
from rigcli.records import EffectRecord

T = TypeVar("T")
PARENT_KEY = "parent"


def parent_of(effect: EffectRecord) -> str | None:
    parent = effect.resource.get(PARENT_KEY)
    return parent if isinstance(parent, str) and parent else None


def kept_parents(kept: Sequence[EffectRecord], others: Sequence[EffectRecord]) -> dict[int, EffectRecord]:
    """Of ``others``, the ones a kept effect was made from (transitively), by index in ``others``,
    each with the kept effect it is a parent of."""
    wanted: dict[str, EffectRecord] = {}
    for effect in kept:
        parent = parent_of(effect)
        if parent is not None:
            wanted[parent] = effect
    found: dict[int, EffectRecord] = {}
    changed = True
    while changed:
        changed = False
        for index, effect in enumerate(others):
            if index in found:
                continue
            child = next((wanted[name] for name in effect.identifiers() if name in wanted), None)
            if child is None:
                continue
            found[index] = child
            parent = parent_of(effect)
            if parent is not None and parent not in wanted:
                wanted[parent] = effect
            changed = True
    return found


def removal_order(items: Sequence[tuple[EffectRecord, T]]) -> list[tuple[EffectRecord, T]]:
    """``items`` with exec sessions first, then every child before the parent it was made from
    (otherwise in the given order; a cycle, which a daemon cannot make, keeps that order)."""
    sessions = [item for item in items if item[0].kind == EXEC_EFFECT]
    rest = [item for item in items if item[0].kind != EXEC_EFFECT]
    ordered: list[tuple[EffectRecord, T]] = []
    while rest:
        parents = {parent for effect, _ in rest if (parent := parent_of(effect)) is not None}
        ready = [item for item in rest if not (item[0].identifiers() & parents)]
        if not ready:  # a cycle: nothing is anyone's child only
            ordered.extend(rest)
            break
        ordered.extend(ready)
        rest = [item for item in rest if not any(item is done for done in ready)]
    return [*sessions, *ordered]


__all__ = ["PARENT_KEY", "kept_parents", "parent_of", "removal_order"]
