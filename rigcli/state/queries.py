"""The queries both backends share beyond runs and workspaces: metadata, applies, provider storage."""

from __future__ import annotations

import json

from rigcli.jsonutil import JsonValue
from rigcli.records import ApplyRecord, utc_now
from rigcli.state.applies import ApplyHistory
from rigcli.state.database import dumps
from rigcli.state.effects import EffectsJournal
from rigcli.state.provider_storage import ProjectProviderStorage
from rigcli.state.rows import Columns
from rigcli.state.runs import RunJournal
from rigcli.state.workspaces import WorkspaceTable

APPLIES = Columns(ApplyRecord, "workflow_applies")


class StoreQueries(RunJournal, ApplyHistory, WorkspaceTable, EffectsJournal):
    """Run journal (with stored output), apply history, workspaces, effects, applies, provider storage
    and metadata: one set of SQL for every backend.

    A backend adds its connection (``StateDatabase`` hooks), its writer lock and ``status()``.
    """

    def get_metadata(self, key: str) -> JsonValue | None:
        with self._read() as db:
            row = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (key,)).fetchone()
            return None if row is None else json.loads(row[0])

    def set_metadata(self, key: str, value: JsonValue) -> None:
        with self._write() as db:
            db.execute(
                'INSERT INTO runtime_metadata ("key", value_json) VALUES (?, ?) '
                'ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json',
                (key, dumps(value)),
            )

    def record_apply(
        self, workflow: str, *, provider_fingerprint: str, cached_node_count: int, node_count: int
    ) -> ApplyRecord:
        record = ApplyRecord(
            workflow=workflow,
            provider_fingerprint=provider_fingerprint,
            cached_node_count=cached_node_count,
            node_count=node_count,
            applied_at=utc_now(),
        )
        updated = ", ".join(f'"{column}" = excluded."{column}"' for column in APPLIES.columns if column != "workflow")
        with self._write() as db:
            db.execute(
                f"{APPLIES.insert()} ON CONFLICT(workflow) DO UPDATE SET {updated}", APPLIES.params(record.to_json())
            )
        return record

    def provider_storage(self, provider_id: str) -> ProjectProviderStorage:
        """``setup.storage`` for ``provider_id``: its JSON records in this database."""
        return ProjectProviderStorage(self, provider_id)


__all__ = ["APPLIES", "StoreQueries"]
