"""The effects journal: how a provider records what it makes before it makes it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol, TypedDict

from rigcli.jsonutil import JsonValue


class EffectEntry(TypedDict):
    """One journaled (or found) effect as a provider sees it: its id, kind and how to find it."""

    id: str
    kind: str  # the provider's own word: machine, snapshot, container, image, ...
    resource: dict[str, JsonValue]  # what requested/confirmed recorded; ``id``/``*_id`` values name it


class EffectJournal(Protocol):
    """``setup.effects`` and ``context.effects``: the write-ahead journal of what a provider makes.

    ``requested`` before the call that makes the resource: pass the id the resource will carry
    (a directory name, a container name or label), or take the generated one and put it on the
    resource, so rig finds it even if the process dies or the reply is lost. ``confirmed`` once it
    exists, with whatever finds it from now on (an image id); ``deleted`` once it is gone (unknown
    ids are fine). ``context.effects`` also records the run or workspace the resource is made for,
    which is how ``rig gc`` knows what is still referred to; ``setup.effects`` records no owner.
    A failed journal write raises, and the resource must then not be made.
    """

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str: ...
    def confirmed(self, effect_id: str, resource: Mapping[str, JsonValue] | None = None) -> None: ...
    def deleted(self, effect_id: str) -> None: ...


class UnjournaledEffects:
    """The journal of a setup made outside rig's engine (tests, scripts): ids, and no record."""

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str:
        return effect_id or new_effect_id(kind)

    def confirmed(self, effect_id: str, resource: Mapping[str, JsonValue] | None = None) -> None:
        return None

    def deleted(self, effect_id: str) -> None:
        return None


# An effect of this kind is a command running on a machine (a container's exec session), not a
# thing: it lives as long as the rig process that journaled it. Once that process is gone (killed
# with -9, so it could not stop the command itself), the next command that loads the provider for a
# run or a workspace, and ``rig gc``, end it through ``remove_effect``; nothing else keeps it.
EXEC_EFFECT = "exec"


def new_effect_id(prefix: str) -> str:
    """A fresh effect id, ``<prefix>-<16 hex>``: safe as a directory name, container name and label."""
    return f"{prefix}-{os.urandom(8).hex()}"
