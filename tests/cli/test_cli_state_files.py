"""`--state FILE`: a file that is not a rig database is refused untouched; reads create no directories."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.cli.conftest import Rig


def _snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` with its bytes: what "left untouched" is checked against."""
    return {str(path.relative_to(directory)): path.read_bytes() for path in directory.rglob("*") if path.is_file()}


def _foreign_database(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (name TEXT)")
        db.execute("INSERT INTO people VALUES ('ada')")
    db.close()


@pytest.mark.parametrize("name", ["rig_config.py", "notes.txt", "foreign.sqlite"])
def test_an_explicit_state_file_that_is_not_a_rig_database_is_refused_untouched(
    rig: Rig, dev_project: Path, name: str
) -> None:
    target = dev_project / name
    if name == "notes.txt":
        target.write_text("my notes, not a database\n")
    elif name == "foreign.sqlite":
        _foreign_database(target)
    before = _snapshot(dev_project)

    result = rig("--state", name, "plan")

    assert result.returncode == 1, result
    assert len(result.error_lines) == 1, result
    assert str(target) in result.error_lines[0]
    assert "left untouched" in result.error_lines[0]
    assert _snapshot(dev_project) == before  # nothing renamed, written or added beside it


def test_the_default_state_file_is_refused_when_it_is_not_sqlite_at_all(rig: Rig, dev_project: Path) -> None:
    state = dev_project / ".rig" / "state.sqlite"
    state.parent.mkdir()
    state.write_text("someone saved a text file here\n")
    before = _snapshot(dev_project)

    result = rig("plan")

    assert result.returncode == 1, result
    assert len(result.error_lines) == 1 and "not a SQLite database" in result.error_lines[0], result
    assert _snapshot(dev_project) == before


def test_the_default_state_file_of_an_unknown_schema_is_still_moved_aside(rig: Rig, dev_project: Path) -> None:
    state = dev_project / ".rig" / "state.sqlite"
    state.parent.mkdir()
    _foreign_database(state)

    result = rig("plan")

    assert result.returncode == 0, result
    assert "moved to" in result.stderr
    [backup] = [path for path in state.parent.iterdir() if ".backup-" in path.name]
    with sqlite3.connect(backup) as db:
        assert db.execute("SELECT name FROM people").fetchall() == [("ada",)]
    db.close()


def test_an_empty_file_named_by_state_becomes_the_database(rig: Rig, dev_project: Path) -> None:
    (dev_project / "state.db").touch()  # mktemp and friends make empty files; they hold nothing to lose
    assert rig("--state", "state.db", "apply").returncode == 0
    assert rig("--state", "state.db", "--json", "plan").json["cached_node_count"] == 2


@pytest.mark.parametrize(
    "command", [["plan"], ["ls"], ["cache", "explain"], ["cache", "ls"], ["--json", "plan"], ["ls", "snapshots"]]
)
def test_a_read_only_command_creates_no_directories_for_a_missing_state(
    rig: Rig, dev_project: Path, command: list[str]
) -> None:
    result = rig("--state", "missing/a/b/state.sqlite", *command)

    assert result.returncode == 0, result
    assert not (dev_project / "missing").exists()
    assert not (dev_project / ".rig").exists()


def test_a_read_only_command_in_a_fresh_project_creates_no_state(rig: Rig, dev_project: Path) -> None:
    plan = rig("--json", "plan")
    assert plan.returncode == 0, plan
    assert [node["reason"]["code"] for node in plan.json["nodes"]] == ["no-previous-run", "upstream-pending"]
    assert not (dev_project / ".rig").exists()


def test_a_writing_command_creates_the_state_directories(rig: Rig, dev_project: Path) -> None:
    assert rig("--state", "missing/a/state.sqlite", "apply").returncode == 0
    assert (dev_project / "missing" / "a" / "state.sqlite").is_file()
    assert rig("--state", "missing/a/state.sqlite", "--json", "plan").json["cached_node_count"] == 2
