"""``setup.storage``: a provider's JSON records in the project database (table provider_state)."""

from __future__ import annotations

import json

from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.provider_api import StoredRecord
from rigcli.records import utc_now
from rigcli.state.database import Row, StateDatabase, dumps

_COLUMNS = 'provider_id, "key", value_json, created_at, updated_at'


def _to_record(row: Row) -> StoredRecord:
    return {
        "provider_id": row[0],
        "key": row[1],
        "value": json.loads(row[2]),
        "created_at": row[3],
        "updated_at": row[4],
    }


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
            row = db.execute(
                f'SELECT {_COLUMNS} FROM provider_state WHERE provider_id = ? AND "key" = ?',
                (self.provider_id, key),
            ).fetchone()
        return None if row is None else _to_record(row)

    def set(self, key: str, value: JsonValue) -> None:
        check_storable(self.provider_id, key, value)
        now = utc_now()
        with self._database._write() as db:
            db.execute(
                f"INSERT INTO provider_state ({_COLUMNS}) VALUES (?, ?, ?, ?, ?) "
                'ON CONFLICT(provider_id, "key") DO UPDATE SET '
                "value_json = excluded.value_json, updated_at = excluded.updated_at",
                (self.provider_id, key, dumps(to_plain_json(value)), now, now),
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
                f"SELECT {_COLUMNS} FROM provider_state WHERE provider_id = ? "
                'AND substr("key", 1, ?) = ? ORDER BY "key"',
                (self.provider_id, len(prefix), prefix),
            )
            return [_to_record(row) for row in rows]

    def clear(self) -> int:
        """Delete every record of this provider; return how many there were."""
        with self._database._write() as db:
            cursor = db.execute("DELETE FROM provider_state WHERE provider_id = ?", (self.provider_id,))
            return cursor.rowcount


__all__ = ["ProjectProviderStorage", "check_storable"]
