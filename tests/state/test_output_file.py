"""The lean reader of a SQLite state file (``state/output_file.py``) against what the store itself writes and asks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.records import utc_now
from rigcli.state import StateStore, create_state_store
from rigcli.state.output_file import OutputFile
from rigcli.state.state_file import utc_now as lean_utc_now
from rigcli.state.workspaces import new_workspace


@pytest.fixture
def sqlite_store(project_dir: Path) -> Iterator[StateStore]:
    (project_dir / ".rig").mkdir()
    store = create_state_store(project_dir=project_dir)
    store.sync_schema()
    yield store
    store.close()


def test_now_is_spelled_as_the_store_spells_it_so_text_order_is_time_order() -> None:
    before = utc_now()
    lean = lean_utc_now()
    after = utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", lean), lean
    assert before <= lean <= after


def test_a_workspace_due_to_expire_sends_rig_logs_the_full_way_as_the_store_would_reap_it(
    sqlite_store: StateStore, project_dir: Path
) -> None:
    path = str(project_dir / ".rig" / "state.sqlite")
    sqlite_store.save_workspace(
        new_workspace("later", "web", status="ready", reap_at="2999-01-01T00:00:00.000000+00:00")
    )
    sqlite_store.save_workspace(new_workspace("creating", "web", status="creating", reap_at=utc_now()))
    opened = OutputFile.open(path)
    assert opened is not None
    try:
        assert not opened.expiry_due()  # nothing due: one later, one still being created
        sqlite_store.save_workspace(new_workspace("past", "web", status="ready", reap_at=utc_now()))
        assert [record.name for record in sqlite_store.due_workspaces(utc_now())] == ["past"]
        assert opened.expiry_due()
    finally:
        opened.close()
