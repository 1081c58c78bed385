"""A program started in a machine, journaled straight in a SQLite state file: rig shell/exec's lean path.

The engine journals through the store (``state/effects.py``), whose imports alone cost more than
the program a ``rig exec`` runs. A provider that starts a program in a machine (a container's
exec) records it before it starts, as an effect of its own kind with this rig's pid and host and
no owner, and marks it deleted once it ended; a rig killed in between leaves it journaled, and the
next writer or ``rig gc`` ends what it left running (``engine/reconcile.py``). The rows are the
ones ``EffectsJournal`` writes; each is one statement, so one transaction.
"""

from __future__ import annotations

import os

from rigcli.errors import StateError
from rigcli.speed.json_lite import dumps
from rigcli.state.state_file import Error, open_current, utc_now

# Not typing.TYPE_CHECKING: rig exec's lean path imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rigcli.jsonutil import JsonValue

_INSERT = (
    "INSERT INTO effects (id, provider_id, kind, status, resource_json, owner_kind, owner_id, error, "
    "created_at, updated_at, pid, host) VALUES (?, ?, ?, 'requested', ?, NULL, NULL, NULL, ?, ?, ?, ?)"
)

_DELETED = "UPDATE effects SET status = 'deleted', error = NULL, updated_at = ? WHERE id = ? AND status != 'deleted'"


class FileEffects:
    """``EffectJournal`` (``setup.effects``: no owner) of ``provider_id`` on the state file at ``path``."""

    def __init__(self, path: str, provider_id: str) -> None:
        self.path = path
        self.provider_id = provider_id

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str:
        chosen = effect_id or f"{kind}-{os.urandom(8).hex()}"  # provider_api.new_effect_id, without typing
        now = utc_now()
        # What process.this_host() answers (its module imports the records).
        row = (chosen, self.provider_id, kind, dumps(dict(resource)), now, now, os.getpid(), os.uname().nodename)
        self._execute(_INSERT, row)
        return chosen

    def confirmed(self, effect_id: str, resource: Mapping[str, JsonValue] | None = None) -> None:
        """A program runs once started: nothing to add to what ``requested`` recorded."""
        if resource:
            raise StateError("the lean path journals programs only: nothing to confirm")

    def deleted(self, effect_id: str) -> None:
        self._execute(_DELETED, (utc_now(), effect_id))

    def _execute(self, query: str, values: tuple[object, ...]) -> None:
        db = open_current(self.path)
        if db is None:
            raise StateError(f"Cannot journal in state database {self.path}")
        try:
            db.execute(query, values)
        except Error as exc:
            raise StateError(f"Cannot journal in state database {self.path}: {exc}") from None
        finally:
            db.close()


__all__ = ["FileEffects"]
