"""Schema creation, metadata, migrations against the SQLModel tables, and unusable databases."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rigcli.errors import StateError
from rigcli.state import STATE_SCHEMA_VERSION, create_state_store
from rigcli.state.migrations import MIGRATION_NAMES
from rigcli.state.rows import Columns
from rigcli.state.workspaces import new_workspace


def _shape(path: Path) -> dict[str, Any]:
    """Tables with their columns (name, type, not null, pk) and indexes, as SQLite reports them."""
    db = sqlite3.connect(path)
    try:
        shape: dict[str, Any] = {}
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in sorted(tables):
            columns = [
                (row[1], row[2].upper(), bool(row[3]), row[5]) for row in db.execute(f'PRAGMA table_info("{table}")')
            ]
            indexes = set()
            for _, name, unique, origin, _partial in db.execute(f'PRAGMA index_list("{table}")'):
                cols = tuple(row[2] for row in db.execute(f'PRAGMA index_info("{name}")'))
                # Auto-index names depend on constraint order; explicit ones are part of the contract.
                indexes.add((name if origin == "c" else origin, bool(unique), cols))
            shape[table] = {"columns": columns, "indexes": indexes}
        return shape
    finally:
        db.close()


def test_sync_creates_database_with_wal_and_metadata(project_dir: Path) -> None:
    config = project_dir / "rig_config.py"
    store = create_state_store(project_dir=project_dir, config_path=config)
    assert store.path == str(project_dir / ".rig" / "state.sqlite")
    assert not os.path.exists(store.path)
    (project_dir / ".rig").mkdir()  # without it, creation waits for the first write (next test)

    result = store.sync_schema()
    store.close()

    assert result.applied == list(MIGRATION_NAMES)
    assert result.schema_version == STATE_SCHEMA_VERSION == len(MIGRATION_NAMES)
    assert (result.has_data_loss, result.warnings, result.backup_path) == (False, [], None)
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    metadata = {key: json.loads(value) for key, value in db.execute("SELECT key, value_json FROM runtime_metadata")}
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert metadata["state.schemaVersion"] == STATE_SCHEMA_VERSION
    assert metadata["state.migrations"] == list(MIGRATION_NAMES)
    assert metadata["project.dir"] == str(project_dir)
    assert metadata["config.path"] == str(config)
    assert {"workflow_node_runs", "workspaces", "workflow_applies", "provider_state", "runtime_metadata"} <= tables


def test_second_sync_applies_nothing_and_keeps_data(store: Any) -> None:
    store.set_metadata("custom", {"kept": True})
    again = store.sync_schema()
    assert again.applied == []
    assert again.has_data_loss is False
    assert store.get_metadata("custom") == {"kept": True}
    assert store.get_metadata("missing") is None


def test_first_use_opens_and_migrates_lazily(project_dir: Path, tmp_path: Path) -> None:
    store = create_state_store(project_dir=project_dir, state_path=tmp_path / "nested" / "custom.sqlite")
    assert store.list_workspaces() == []
    assert store.last_sync is not None and store.last_sync.applied == list(MIGRATION_NAMES)
    # Reads of a state that does not exist yet create nothing (rig plan must not make directories) ...
    assert not os.path.exists(tmp_path / "nested")
    store.set_metadata("first", "write")
    # ... the first write creates the directories and the database.
    assert os.path.exists(tmp_path / "nested" / "custom.sqlite")
    assert store.get_metadata("first") == "write"
    store.close()


def test_migrated_schema_matches_sqlmodel_tables(tmp_path: Path, project_dir: Path) -> None:
    from sqlmodel import SQLModel, create_engine

    import rigcli.state.tables  # noqa: F401  (registers the tables on SQLModel.metadata)

    (project_dir / ".rig").mkdir()
    store = create_state_store(project_dir=project_dir)
    store.sync_schema()
    store.close()
    reference = tmp_path / "reference.sqlite"
    engine = create_engine(f"sqlite:///{reference}")
    SQLModel.metadata.create_all(engine)
    engine.dispose()

    migrated, declared = _shape(Path(store.path)), _shape(reference)
    assert set(declared) == set(SQLModel.metadata.tables)
    assert migrated == declared


def _record_columns() -> list[Columns[Any]]:
    from rigcli.state.applies import APPLY_RUNS
    from rigcli.state.effects import EFFECTS
    from rigcli.state.provider_storage import STORED
    from rigcli.state.queries import APPLIES
    from rigcli.state.run_output import OUTPUT
    from rigcli.state.runs import PARTS, RUNS
    from rigcli.state.workspaces import WORKSPACES

    return [RUNS, WORKSPACES, EFFECTS, APPLIES, STORED, APPLY_RUNS, OUTPUT, PARTS]


def test_each_record_is_exactly_its_tables_columns() -> None:
    """Rows are mapped by name (state/rows.py): a record's fields are its table's columns, in order."""
    from sqlmodel import SQLModel

    import rigcli.state.tables  # noqa: F401  (registers the tables on SQLModel.metadata)

    mapped = {codec.table: codec for codec in _record_columns()}
    # Every table but the key/value metadata has a record type.
    assert set(SQLModel.metadata.tables) - set(mapped) == {"runtime_metadata"}
    for table, codec in mapped.items():
        declared = SQLModel.metadata.tables[table].columns
        # Columns no field maps are named (unused), and written on insert: never forgotten.
        assert [*codec.columns, *codec.unused] == [
            column.name for column in declared if column.name in codec.columns
        ] + [column.name for column in declared if column.name not in codec.columns], table
        record = codec.record
        if not dataclasses.is_dataclass(record):
            continue  # provider storage's TypedDict (the provider contract): names only
        types = {item.name: str(item.type) for item in dataclasses.fields(record)}
        for field, column in zip(codec.fields, codec.columns, strict=True):
            if column.endswith("_json"):
                continue  # JSON text: NOT NULL even when the value is null
            optional = types[field].endswith("| None")
            assert optional == bool(declared[column].nullable and not declared[column].primary_key), (table, field)


def test_a_query_without_a_records_columns_is_refused_by_name(store: Any) -> None:
    from rigcli.state.runs import RUNS

    run_id = store.start_run(
        workflow="w",
        node_path="a",
        node_name="a",
        node_kind="task",
        node_key="k",
        provider_fingerprint="p",
        upstream_run_ids=["u"],
    )
    with store._read() as db:
        # Any column order reads the same record: the mapping goes by name, not position.
        reordered = ", ".join(f'"{column}"' for column in reversed(RUNS.columns))
        [run] = RUNS.all(db.execute(f"SELECT {reordered} FROM workflow_node_runs"))
        assert (run.id, run.status, run.upstream_run_ids, run.invalidated) == (run_id, "running", ["u"], False)
        with pytest.raises(StateError, match="workflow_node_runs lacks the columns workflow, node_path, "):
            RUNS.all(db.execute("SELECT id, status FROM workflow_node_runs"))


def test_legacy_database_is_moved_aside_and_replaced(project_dir: Path) -> None:
    state_path = project_dir / ".rig" / "state.sqlite"
    state_path.parent.mkdir()
    legacy = sqlite3.connect(state_path)
    legacy.execute(
        "CREATE TABLE workspaces (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, provider_id TEXT NOT NULL, "
        "vm_id TEXT NOT NULL, machine TEXT NOT NULL, snapshot_id TEXT NOT NULL, created_at TEXT NOT NULL, "
        "updated_at TEXT NOT NULL, metadata_json TEXT NOT NULL)"
    )
    legacy.execute(
        "INSERT INTO workspaces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            "workspace-1",
            "demo",
            "freestyle",
            "vm-1",
            "smoke",
            "snap-1",
            "2026-05-10T00:00:00.000Z",
            "2026-05-10T00:00:00.000Z",
            json.dumps({"ready": True}),
        ),
    )
    legacy.commit()
    legacy.close()

    store = create_state_store(project_dir=project_dir, state_path=state_path)
    result = store.sync_schema()

    assert result.applied == list(MIGRATION_NAMES)
    assert result.has_data_loss is True
    assert result.backup_path is not None
    assert any(w.startswith("Reset rig state database") and result.backup_path in w for w in result.warnings)
    assert os.path.basename(result.backup_path).startswith("state.sqlite.backup-")
    assert os.path.dirname(result.backup_path) == str(state_path.parent)
    assert store.list_workspaces() == []

    made = new_workspace("demo", "smoke", workflow_ctx={"ready": True}, ctx={"ready": True})
    store.save_workspace(
        replace(made, id="workspace-2", created_at="2026-05-10T00:00:00.000Z", updated_at="2026-05-10T00:00:00.000Z")
    )
    found = store.get_workspace("demo", "smoke")
    assert found is not None
    assert (found.name, found.workflow, found.status) == ("demo", "smoke", "ready")
    assert found.ctx == {"ready": True}
    store.close()

    backup = sqlite3.connect(result.backup_path)
    assert backup.execute("SELECT id, vm_id FROM workspaces").fetchall() == [("workspace-1", "vm-1")]
    backup.close()


@pytest.mark.parametrize("where", ["named", "default"])
def test_file_that_is_not_a_database_is_refused_and_left_untouched(project_dir: Path, where: str) -> None:
    # Somebody's notes (or rig_config.py passed to --state) are never renamed or overwritten,
    # not even at the default path: only SQLite databases of another schema are moved aside.
    state_path = project_dir / ("state.sqlite" if where == "named" else ".rig/state.sqlite")
    state_path.parent.mkdir(exist_ok=True)
    notes = b"this is not sqlite at all, but somebody's notes\n" * 100
    state_path.write_bytes(notes)
    store = create_state_store(project_dir=project_dir, state_path=state_path)
    with pytest.raises(StateError, match=r"is not a SQLite database.*left untouched"):
        store.sync_schema()
    store.close()
    assert state_path.read_bytes() == notes
    assert [name for name in os.listdir(state_path.parent) if name != "state.sqlite"] == []


def test_a_named_database_of_another_schema_is_refused_and_left_untouched(project_dir: Path) -> None:
    state_path = project_dir / "theirs.sqlite"
    db = sqlite3.connect(state_path)
    db.execute("CREATE TABLE people (name TEXT)")
    db.commit()
    db.close()
    before = state_path.read_bytes()
    store = create_state_store(project_dir=project_dir, state_path=state_path)
    with pytest.raises(StateError, match=r"is not a rig state database.*left untouched"):
        store.sync_schema()
    store.close()
    assert state_path.read_bytes() == before
    assert sorted(os.listdir(project_dir)) == ["theirs.sqlite"]


def test_older_database_whose_migration_fails_is_moved_aside(project_dir: Path) -> None:
    # Claims no migrations yet, but a conflicting table makes m001 fail: unmigratable.
    state_path = project_dir / ".rig" / "state.sqlite"  # rig's own location: it may be moved aside
    state_path.parent.mkdir()
    db = sqlite3.connect(state_path)
    db.execute('CREATE TABLE runtime_metadata ("key" TEXT PRIMARY KEY, value_json TEXT NOT NULL)')
    db.execute("INSERT INTO runtime_metadata VALUES ('state.schemaVersion', '0'), ('state.migrations', '[]')")
    db.execute("CREATE TABLE workspaces (precious TEXT)")
    db.execute("INSERT INTO workspaces VALUES ('keep me')")
    db.commit()
    db.close()

    store = create_state_store(project_dir=project_dir, state_path=state_path)
    result = store.sync_schema()
    store.close()

    assert result.has_data_loss is True and result.backup_path is not None
    assert "migration from schema version 0 failed" in result.warnings[0]
    backup = sqlite3.connect(result.backup_path)
    assert backup.execute("SELECT precious FROM workspaces").fetchall() == [("keep me",)]
    backup.close()


def test_newer_schema_is_refused_and_left_untouched(project_dir: Path) -> None:
    store = create_state_store(project_dir=project_dir)
    store.sync_schema()
    store.set_metadata("state.schemaVersion", STATE_SCHEMA_VERSION + 5)
    store.set_metadata("state.migrations", [*MIGRATION_NAMES, "m900_future"])
    store.set_metadata("rig.version", "9.0.0")
    store.close()
    before = Path(store.path).read_bytes()
    siblings = sorted(os.listdir(project_dir / ".rig"))

    again = create_state_store(project_dir=project_dir)
    with pytest.raises(StateError) as caught:
        again.sync_schema()
    message = str(caught.value)
    assert store.path in message
    assert f"schema version {STATE_SCHEMA_VERSION + 5}" in message
    assert f"schema version {STATE_SCHEMA_VERSION} at most" in message
    assert "rig 9.0.0" in message
    assert caught.value.exit_code == 1
    assert Path(store.path).read_bytes() == before
    assert sorted(os.listdir(project_dir / ".rig")) == siblings


_SYNC_SCRIPT = """
import sys
from rigcli.state import create_state_store
store = create_state_store(project_dir=sys.argv[1])
print(",".join(store.sync_schema().applied))
"""


def test_concurrent_first_syncs_migrate_once(project_dir: Path) -> None:
    (project_dir / ".rig").mkdir()  # without it, each sync would wait for a first write to create the file
    procs = [
        subprocess.Popen([sys.executable, "-c", _SYNC_SCRIPT, str(project_dir)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=60)[0].strip() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0]
    assert sorted(outputs) == ["", "", "", ",".join(MIGRATION_NAMES)]
    store = create_state_store(project_dir=project_dir)
    assert store.sync_schema().has_data_loss is False
    assert store.get_metadata("state.migrations") == list(MIGRATION_NAMES)
    store.close()


_LIGHT_SCRIPT = """
import sys
from rigcli.state import create_state_store
store = create_state_store(project_dir=sys.argv[1])
store.sync_schema()
store.runs_by_path("web")
store.provider_storage("p").set("k", 1)
heavy = sorted(name for name in ("sqlalchemy", "sqlmodel", "pydantic") if name in sys.modules)
print(",".join(heavy))
"""


def test_store_paths_do_not_import_the_orm(project_dir: Path) -> None:
    # A cached plan's budget is ~0.3 s; importing SQLModel alone costs about that much.
    out = subprocess.run(
        [sys.executable, "-c", _LIGHT_SCRIPT, str(project_dir)], capture_output=True, text=True, check=True
    ).stdout
    assert "sqlalchemy" not in out and "sqlmodel" not in out


def test_copy_and_recover_carry_every_table_of_the_schema() -> None:
    """A table a migration adds and DATA_TABLES forgets would be dropped by `state copy` and by
    `state recover` (run history and stored output were, once)."""
    from rigcli.state import copy, recovery, tables
    from rigcli.state.migrations import DATA_TABLES

    described = {table.name for table in tables.SQLModel.metadata.sorted_tables}
    assert set(DATA_TABLES) == described
    assert copy.TABLES == recovery.TABLES == DATA_TABLES
