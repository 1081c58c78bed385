"""``setup.storage``: a provider's JSON records in the project database (table provider_state)."""

from __future__ import annotations

from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.provider_api import StoredRecord
from rigcli.records import utc_now
from rigcli.state.database import StateDatabase
from rigcli.state.rows import Columns


def _stored(provider_id: str, key: str, value: JsonValue, created_at: str, updated_at: str) -> StoredRecord:
    return {"provider_id": provider_id, "key": key, "value": value, "created_at": created_at, "updated_at": updated_at}


# StoredRecord is a TypedDict of the provider contract (providers read it by key), so its fields are named here.
STORED = Columns(
    _stored, "provider_state", names=("provider_id", "key", "value", "created_at", "updated_at"), as_json=("value",)
)


def check_storable(provider_id: str, key: str, value: JsonValue) -> None:
    if not isinstance(key, str) or not key:
        msg = f"Provider {provider_id} storage keys must be non-empty strings, not {key!r}"
        raise ProviderError(msg)
    bad = find_non_json(value)
    if bad is not None:
        msg = f"Provider {provider_id} storage value for {key!r} must be JSON-serializable (at {bad})"
        raise ProviderError(msg)


class ProjectProviderStorage:
    """A KeyValueStore over one provider's rows; ``set`` keeps a record's ``created_at``."""

    def __init__(self, database: StateDatabase, provider_id: str) -> None:
        self._database = database
        self.provider_id = provider_id

    def get(self, key: str) -> StoredRecord | None:
        with self._database._read() as db:
            return STORED.one(
                db.execute(
                    f'SELECT {STORED.select} FROM provider_state WHERE provider_id = ? AND "key" = ?',
                    (self.provider_id, key),
                )
            )

    def set(self, key: str, value: JsonValue) -> None:
        check_storable(self.provider_id, key, value)
        now = utc_now()
        with self._database._write() as db:
            db.execute(
                f'{STORED.insert()} ON CONFLICT(provider_id, "key") DO UPDATE SET '
                "value_json = excluded.value_json, updated_at = excluded.updated_at",
                STORED.params(_stored(self.provider_id, key, to_plain_json(value), now, now)),
            )

    def delete(self, key: str) -> bool:
        with self._database._write() as db:
            cursor = db.execute(
                'DELETE FROM provider_state WHERE provider_id = ? AND "key" = ?', (self.provider_id, key)
            )
            return cursor.rowcount > 0

    def entries(self, prefix: str = "") -> list[StoredRecord]:
        """Records whose key starts with ``prefix``, sorted by key."""
        # substr() rather than LIKE: keys may contain % and _, and LIKE ignores case.
        with self._database._read() as db:
            rows = db.execute(
                f"SELECT {STORED.select} FROM provider_state WHERE provider_id = ? "
                'AND substr("key", 1, ?) = ? ORDER BY "key"',
                (self.provider_id, len(prefix), prefix),
            )
            return STORED.all(rows)

    def clear(self) -> int:
        """Delete every record of this provider; return how many there were."""
        with self._database._write() as db:
            cursor = db.execute("DELETE FROM provider_state WHERE provider_id = ?", (self.provider_id,))
            return cursor.rowcount


__all__ = ["STORED", "ProjectProviderStorage", "check_storable"]
