"""What only the PostgreSQL backend has: URLs, masking, driver errors, shared schemas, fragment scopes.

Everything both backends share is in the parametrized conformance tests beside this file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rigcli.errors import StateError
from rigcli.state import STATE_SCHEMA_VERSION
from rigcli.state.migrations import MIGRATION_NAMES
from rigcli.state.postgres.connection import translate
from rigcli.state.postgres.url import mask_url, parse_url
from rigcli.state.workspaces import new_workspace
from tests.backends import rows

pytestmark = pytest.mark.usefixtures("_private_rig_home")


def _store(url: str, project_dir: Path) -> Any:
    from rigcli.state.factory import open_state_store

    return open_state_store(None, project_dir=str(project_dir), state_path=url)


@pytest.fixture
def schema_url(postgres_server: Any) -> str:
    from tests.pg_server import unique_schema

    return str(postgres_server.url(unique_schema()))


# -- pure: URLs and placeholders --------------------------------------------------------------------


def test_urls_are_masked_and_rig_parameters_are_taken_out_for_libpq() -> None:
    parsed = parse_url("postgres://dev:s%40cret@db:5432/rig?schema=team&fragments_schema=shared&sslmode=require")
    assert (parsed.schema, parsed.fragments_schema) == ("team", "shared")
    assert parsed.masked == "postgres://dev:***@db:5432/rig?schema=team&fragments_schema=shared&sslmode=require"
    assert parsed.conninfo == "postgres://dev:s%40cret@db:5432/rig?sslmode=require"
    assert parsed.scrub("password s@cret or s%40cret") == "password *** or ***"
    assert mask_url("postgresql://dev:pw@db:5432/rig") == "postgresql://dev:***@db:5432/rig"
    assert mask_url("postgresql:///rig?host=/run/postgresql&password=pw") == (
        "postgresql:///rig?host=/run/postgresql&password=***"
    )
    defaults = parse_url("postgresql:///rig?host=/tmp")
    assert (defaults.schema, defaults.fragments_schema, defaults.conninfo) == (
        "rig",
        "rig_fragments",
        "postgresql:///rig?host=/tmp",
    )


@pytest.mark.parametrize("query", ["schema=Team", "schema=a-b", "fragments_schema=1x", "schema=x&fragments_schema=x"])
def test_bad_schema_names_are_refused_with_the_url_masked(query: str) -> None:
    with pytest.raises(StateError, match=r"postgresql://dev:\*\*\*@db/rig") as caught:
        parse_url(f"postgresql://dev:pw@db/rig?{query}")
    assert "pw" not in str(caught.value).replace("postgresql", "")


def test_placeholders_are_translated_outside_quotes_only() -> None:
    assert translate("SELECT ? FROM t WHERE a = :name AND b::text LIKE '%?' AND \"c?\" = ?") == (
        "SELECT %s FROM t WHERE a = %(name)s AND b::text LIKE '%%?' AND \"c?\" = %s"
    )


# -- against the session's server ----------------------------------------------------------------------


def test_the_migrated_schema_has_the_sqlmodel_tables_and_columns(schema_url: str, project_dir: Path) -> None:
    from sqlmodel import SQLModel

    import rigcli.state.tables  # noqa: F401  (registers the tables on SQLModel.metadata)

    store = _store(schema_url, project_dir)
    result = store.sync_schema()
    store.close()
    assert result.applied == list(MIGRATION_NAMES)
    from sqlalchemy.dialects import postgresql

    schema = parse_url(schema_url).schema
    found: dict[str, list[tuple[str, str, bool]]] = {}
    for table, column, data_type, nullable in rows(
        schema_url,
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = ? ORDER BY table_name, ordinal_position",
        (schema,),
    ):
        found.setdefault(table, []).append((column, data_type, nullable == "YES"))
    declared = {
        name: [
            (
                column.name,
                column.type.compile(dialect=postgresql.dialect()).lower(),
                bool(column.nullable) and not column.primary_key,
            )
            for column in table.columns
        ]
        for name, table in SQLModel.metadata.tables.items()
    }
    assert found == declared
    keys = rows(
        schema_url,
        "SELECT k.table_name, k.column_name FROM information_schema.table_constraints c "
        "JOIN information_schema.key_column_usage k "
        "ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema "
        "WHERE c.table_schema = ? AND c.constraint_type = 'PRIMARY KEY' ORDER BY k.table_name, k.ordinal_position",
        (schema,),
    )
    assert keys == [
        (name, column.name)
        for name, table in sorted(SQLModel.metadata.tables.items())
        for column in table.primary_key.columns
    ]


def test_a_newer_schema_is_refused_and_left_untouched(schema_url: str, project_dir: Path) -> None:
    store = _store(schema_url, project_dir)
    store.sync_schema()
    store.set_metadata("state.schemaVersion", STATE_SCHEMA_VERSION + 1)
    store.set_metadata("rig.version", "9.0.0")
    store.close()
    before = rows(schema_url, "SELECT * FROM runtime_metadata ORDER BY 1")
    with pytest.raises(StateError) as caught:
        _store(schema_url, project_dir).sync_schema()
    message = str(caught.value)
    assert "rig 9.0.0" in message and f"schema version {STATE_SCHEMA_VERSION} at most" in message
    assert "***" in message and parse_url(schema_url).password not in message
    assert rows(schema_url, "SELECT * FROM runtime_metadata ORDER BY 1") == before


def test_a_foreign_schema_is_refused_naming_state_copy_and_never_moved(schema_url: str, project_dir: Path) -> None:
    schema = parse_url(schema_url).schema
    rows(schema_url, f"CREATE SCHEMA {schema}")
    rows(schema_url, "CREATE TABLE workspaces (precious TEXT)")
    rows(schema_url, "INSERT INTO workspaces VALUES ('keep me')")
    with pytest.raises(StateError, match="rig state copy") as caught:
        _store(schema_url, project_dir).sync_schema()
    assert "never moved aside" in str(caught.value)
    assert rows(schema_url, "SELECT precious FROM workspaces") == [("keep me",)]
    tables = rows(schema_url, "SELECT tablename FROM pg_tables WHERE schemaname = ?", (schema,))
    assert tables == [("workspaces",)]


def _statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement rig sends from now on (each one a round trip to the server)."""
    from rigcli.state.postgres.connection import PgConnection

    sent: list[str] = []
    execute, executemany = PgConnection.execute, PgConnection.executemany

    def counted(self: PgConnection, sql: str, parameters: Any = (), /) -> Any:
        sent.append(sql)
        return execute(self, sql, parameters)

    def counted_many(self: PgConnection, sql: str, seq_of_parameters: Any, /) -> Any:
        sent.append(sql)
        return executemany(self, sql, seq_of_parameters)

    monkeypatch.setattr(PgConnection, "execute", counted)
    monkeypatch.setattr(PgConnection, "executemany", counted_many)
    return sent


def test_a_current_schema_opens_in_one_statement_and_notes_only_what_changed(
    schema_url: str, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _store(schema_url, project_dir)
    assert first.sync_schema().applied == list(MIGRATION_NAMES)
    first.close()
    sent = _statements(monkeypatch)
    again = _store(schema_url, project_dir)
    assert again.sync_schema().applied == []
    assert len(sent) == 1 and "runtime_metadata" in sent[0], sent  # no catalog listing, no second read
    again.close()
    elsewhere = tmp_path / "a-clone-elsewhere"
    elsewhere.mkdir()
    sent.clear()
    clone = _store(schema_url, elsewhere)
    clone.sync_schema()
    clone.close()
    assert [sql.split()[0] for sql in sent] == ["SELECT", "BEGIN", "INSERT", "COMMIT"]
    noted = rows(schema_url, "SELECT value_json FROM runtime_metadata WHERE \"key\" = 'project.dir'")
    assert noted == [(f'"{elsewhere}"',)]


def test_the_lock_holder_says_who_it_is_in_one_statement_and_names_its_session(
    schema_url: str, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(schema_url, project_dir)
    store.sync_schema()
    sent = _statements(monkeypatch)
    with store.lock("apply"):
        taking = list(sent)
        stored = rows(schema_url, "SELECT value_json FROM runtime_metadata WHERE \"key\" = 'lock.holder'")
        holder = json.loads(stored[0][0])
        activity = "SELECT application_name FROM pg_stat_activity WHERE pid = ?"
        named = rows(schema_url, activity, (holder["backend_pid"],))
    store.close()
    assert (holder["pid"], holder["command"]) == (os.getpid(), "apply")
    assert named == [(f"rig apply pid {os.getpid()}",)]
    assert [sql.split()[1] for sql in taking] == ["pg_try_advisory_lock(?,", "value_json", "INTO"], taking
    assert rows(schema_url, "SELECT count(*) FROM runtime_metadata WHERE \"key\" = 'lock.holder'") == [(0,)]


_SYNC = """
import sys
from rigcli.state.factory import open_state_store
store = open_state_store(None, project_dir=sys.argv[2], state_path=sys.argv[1])
print(",".join(store.sync_schema().applied))
"""


def test_concurrent_first_syncs_migrate_once(schema_url: str, project_dir: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", _SYNC, schema_url, str(project_dir)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=60)[0].strip() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0]
    # Each migration is its own transaction under the lock, so racing processes may share the
    # work; what must hold is that every migration ran exactly once.
    applied = [name for output in outputs for name in output.split(",") if name]
    assert sorted(applied) == sorted(MIGRATION_NAMES)


def test_fragments_share_one_schema_with_a_lock_and_runs_each(schema_url: str, project_dir: Path) -> None:
    project = _store(schema_url, project_dir)
    first, second = project.fragment_store("aaa"), project.fragment_store("bbb")
    for fragment in (first, second):
        fragment.sync_schema()
        run = fragment.start_run(
            workflow=f"fragment:{fragment.scope}",
            node_path="base",
            node_name="base",
            node_kind="task",
            node_key="k",
            provider_fingerprint="p",
            upstream_run_ids=[],
        )
        fragment.finish_run(run, status="succeeded", output={})
    with first.lock("apply"), second.lock("apply", wait=False):  # one lock per fragment, not per schema
        assert first.status().lock is not None and project.status().lock is None
    assert first.delete_runs("fragment:aaa") == 1
    assert [run.workflow for run in second.list_runs()] == ["fragment:bbb"]
    fragments = parse_url(schema_url).fragments_schema
    assert rows(schema_url, f"SELECT workflow FROM {fragments}.workflow_node_runs") == [("fragment:bbb",)]
    for store in (project, first, second):
        store.close()


def test_the_password_never_reaches_the_state(postgres_server: Any, schema_url: str, project_dir: Path) -> None:
    store = _store(schema_url, project_dir)
    store.save_workspace(new_workspace("dev", "web"))
    with store.lock("apply"):
        store.set_metadata("note", {"url": store.path})
        dumped = rows(schema_url, "SELECT string_agg(t::text, ' ') FROM runtime_metadata t")[0][0]
    store.close()
    assert postgres_server.password not in dumped and "***" in dumped


def _error(url: str, project_dir: Path) -> str:
    with pytest.raises(StateError) as caught:
        _store(url, project_dir).sync_schema()
    return str(caught.value)


def test_connection_errors_are_one_line_with_the_password_masked(postgres_server: Any, project_dir: Path) -> None:
    port = postgres_server.port
    wrong = _error(f"postgresql://rig:not-the-password@127.0.0.1:{port}/rig_test", project_dir)
    missing = _error(f"{postgres_server.admin_url('no_such_db')}", project_dir)
    refused = _error("postgresql://rig:hunter2@127.0.0.1:1/rig?connect_timeout=2", project_dir)
    for message in (wrong, missing, refused):
        assert "\n" not in message and "rig:***@127.0.0.1" in message, message
        assert (
            "not-the-password" not in message and "hunter2" not in message and postgres_server.password not in message
        )
    assert "password authentication failed" in wrong
    assert "no_such_db" in missing and "does not exist" in missing
    assert "Cannot connect" in refused


_NO_DRIVER = """
import sys
sys.modules["psycopg"] = None  # as if the postgres extra was not installed
from rigcli.errors import RigError
from rigcli.state.factory import open_state_store
try:
    open_state_store(None, project_dir=".", state_path="postgresql://dev:secret@db/rig").sync_schema()
except RigError as error:
    print(error)
"""


def test_without_psycopg_one_line_says_what_to_install(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _NO_DRIVER], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == (
        "State URL postgresql://dev:***@db/rig needs the PostgreSQL driver psycopg: pip install 'rig[postgres]'"
    )
