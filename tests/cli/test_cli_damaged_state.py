"""A damaged state database (one page's header overwritten): every command says so in one line with
exit 1, none writes into the file, none moves it aside, and later rigs stay off it until it is fixed."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.cli.cli_support import Result, run_rig, write_project
from tests.cli.conftest import Rig

PAGE = 4096
DAMAGED = "is damaged ("
OFFERED = "See `rig state check`, and `rig state recover`"


def _settled(rig: Rig, dev_project: Path) -> Path:
    """The dev project applied with two workspaces, its log checkpointed into the database file."""
    for args in (("apply",), ("fork", "one"), ("fork", "two")):
        assert rig(*args).returncode == 0
    database = dev_project / ".rig" / "state.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return database


def _root_page(database: Path, table: str) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0])


def _damage(database: Path, page: int) -> str:
    """Overwrite the b-tree header of ``page``; the file's digest after the damage."""
    image = bytearray(database.read_bytes())
    start = (page - 1) * PAGE + (100 if page == 1 else 0)
    image[start : start + 8] = b"\xff" * 8
    database.write_bytes(bytes(image))
    return hashlib.sha256(bytes(image)).hexdigest()


def _digest(database: Path) -> str:
    return hashlib.sha256(database.read_bytes()).hexdigest()


def _unwritten(database: Path, digest: str) -> bool:
    wal = Path(f"{database}-wal")
    return _digest(database) == digest and not (wal.exists() and wal.stat().st_size)


@pytest.mark.parametrize("table", ["workflow_node_runs", "workspaces", "runtime_metadata"])
@pytest.mark.parametrize(
    "argv",
    [("plan",), ("apply",), ("ls",), ("fork", "three"), ("rm", "one", "--yes"), ("cache", "ls"), ("gc",)],
    ids=" ".join,
)
def test_a_command_on_a_damaged_database_says_so_and_writes_nothing(
    rig: Rig, dev_project: Path, table: str, argv: tuple[str, ...]
) -> None:
    database = _settled(rig, dev_project)
    digest = _damage(database, _root_page(database, table))

    result = rig(*argv)

    assert _unwritten(database, digest), result
    assert not list(database.parent.glob("state.sqlite.backup-*")), "moved aside for an empty database"
    if result.returncode == 0:  # it read nothing damaged and wrote nothing: fine
        assert argv[0] in ("ls", "cache", "plan"), result
        return
    assert result.returncode == 1, result
    [line] = result.error_lines
    assert str(database) in line and DAMAGED in line and OFFERED in line, line


def test_a_writer_checks_the_file_before_its_first_write(rig: Rig, dev_project: Path) -> None:
    """Damage in a table apply never reads (workspaces) is found before apply writes its runs."""
    database = _settled(rig, dev_project)
    assert rig("cache", "clear", "--yes").returncode == 0  # apply has tasks to run and record
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    digest = _damage(database, _root_page(database, "workspaces"))

    result = rig("apply")

    assert result.returncode == 1, result
    assert DAMAGED in result.error_lines[0]
    assert _unwritten(database, digest)


def test_later_rigs_stay_off_a_damaged_database_until_it_is_replaced(rig: Rig, dev_project: Path) -> None:
    database = _settled(rig, dev_project)
    healthy = database.read_bytes()
    _damage(database, _root_page(database, "workspaces"))
    assert rig("apply").returncode == 1
    assert Path(f"{database}.damaged").exists()

    refused = rig("cache", "ls")  # reads nothing damaged, and is still refused: the file is known bad
    assert refused.returncode == 1, refused
    assert DAMAGED in refused.error_lines[0]

    database.write_bytes(healthy)  # the user restores a copy
    restored = rig("ls")
    assert restored.returncode == 0, restored
    assert not Path(f"{database}.damaged").exists()


def test_doctor_says_the_state_is_damaged(rig: Rig, dev_project: Path) -> None:
    database = _settled(rig, dev_project)
    digest = _damage(database, _root_page(database, "workflow_node_runs"))

    result = rig("doctor")
    report = rig("--json", "doctor")

    assert result.returncode == 0, result
    assert "DAMAGED" in result.stdout
    assert report.json["project"]["state"]["damaged"]
    assert _unwritten(database, digest)


def test_state_copy_refuses_a_damaged_source_and_blames_the_source(rig: Rig, dev_project: Path, tmp_path: Path) -> None:
    database = _settled(rig, dev_project)
    digest = _damage(database, _root_page(database, "workflow_node_runs"))
    target = tmp_path / "copy.sqlite"

    result = rig("state", "copy", "--to", str(target))

    assert result.returncode == 1, result
    [line] = result.error_lines
    assert f"State database {database} is damaged" in line
    assert _unwritten(database, digest)
    with contextlib.suppress(FileNotFoundError):
        shutil.copy(target, tmp_path / "seen.sqlite")
    assert not Path(f"{target}.damaged").exists()


def _leaf_page(database: Path, table: str) -> int:
    """A leaf page of ``table`` other than its root: damage there loses some rows, not all."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        pages = [
            int(row[0])
            for row in db.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,))
        ]
    root = _root_page(database, table)
    return next(page for page in pages if page != root)


def _count(database: Path, table: str) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_state_check_says_ok_or_names_the_damage(rig: Rig, dev_project: Path) -> None:
    database = _settled(rig, dev_project)
    healthy = rig("--json", "state", "check")
    assert healthy.returncode == 0, healthy
    assert healthy.json == {"path": str(database), "ok": True, "problems": []}

    digest = _damage(database, _root_page(database, "workspaces"))
    damaged = rig("--json", "state", "check")

    assert damaged.returncode == 1, damaged
    assert damaged.json["ok"] is False and damaged.json["problems"]
    [line] = damaged.error_lines
    assert DAMAGED in line and "rig state recover" in line
    assert _unwritten(database, digest)


MANY_RUNS = """
from rigcli import workflow


def grow(index):
    def task(step):
        return {"ctx": {**step.ctx, f"k{index}": "v" * 400}}

    return task


def create(workflow, workspace):
    return {"name": workspace.name}


sequence = workflow("many").sequence("many")
for index in range(40):
    sequence = sequence.task(f"t{index}", grow(index))
workflows = sequence.workspace(create=create)
"""


def test_state_recover_salvages_into_a_new_file_and_keeps_the_damaged_one(tmp_path: Path) -> None:
    project = write_project(tmp_path / "many", MANY_RUNS)

    def rig(*args: str) -> Result:
        return run_rig(*args, cwd=project)

    for args in (("apply",), *(("fork", name) for name in ("one", "two", "three"))):
        assert rig(*args).returncode == 0
    database = project / ".rig" / "state.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runs = _count(database, "workflow_node_runs")
    digest = _damage(database, _leaf_page(database, "workflow_node_runs"))
    assert rig("apply").returncode == 1  # found, marked

    recovered = rig("--json", "state", "recover")

    assert recovered.returncode == 0, recovered
    report = recovered.json
    backup = Path(report["backup"])
    assert backup.parent == database.parent and backup.name.startswith("state.sqlite.damaged-")
    assert _digest(backup) == digest  # the damaged file is kept exactly as it was
    assert report["tables"]["workspaces"] == 3 and 0 < report["tables"]["workflow_node_runs"] < runs
    assert report["incomplete"] == ["workflow_node_runs"]
    assert rig("--json", "state", "check").json["ok"] is True
    assert not Path(f"{database}.damaged").exists()
    listed = rig("--json", "ls")
    assert listed.returncode == 0, listed
    assert {ws["name"] for ws in listed.json["workflows"][0]["workspaces"]} == {"one", "two", "three"}
    assert rig("apply").returncode == 0  # the project goes on with the recovered file (re-running what was lost)
    assert _count(database, "workflow_node_runs") >= runs


def test_state_recover_leaves_a_healthy_file_alone(rig: Rig, dev_project: Path) -> None:
    database = _settled(rig, dev_project)
    digest = _digest(database)

    result = rig("--json", "state", "recover")

    assert result.returncode == 0, result
    assert result.json["recovered"] is False
    assert _digest(database) == digest and not list(database.parent.glob("state.sqlite.damaged-*"))


def _damage_a_stored_value(database: Path, needle: bytes) -> str:
    """Overwrite one byte inside a stored JSON value (a cell's content, no page header): SQLite's
    checks still pass, the value no longer parses. The file's digest after the damage."""
    image = bytearray(database.read_bytes())
    at = image.index(needle) + len(needle)
    image[at] = 0x01  # a control character inside a JSON string
    database.write_bytes(bytes(image))
    return hashlib.sha256(bytes(image)).hexdigest()


def test_a_stored_value_that_does_not_parse_is_found_by_check_and_dropped_by_recover(tmp_path: Path) -> None:
    project = write_project(tmp_path / "many", MANY_RUNS)

    def rig(*args: str) -> Result:
        return run_rig(*args, cwd=project)

    assert rig("apply").returncode == 0
    database = project / ".rig" / "state.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runs = _count(database, "workflow_node_runs")
    digest = _damage_a_stored_value(database, b'"k7":"vvvv')
    refused = rig("apply")
    assert refused.returncode == 1 and DAMAGED in refused.error_lines[0], refused
    for later in (("fork", "later"), ("cache", "clear", "--yes"), ("gc",)):  # the marker's check finds it again
        result = rig(*later)
        assert result.returncode == 1 and DAMAGED in result.error_lines[0], result
        assert _unwritten(database, digest), result

    checked = rig("--json", "state", "check")

    assert checked.returncode == 1, checked  # SQLite's own check passes: rig's must not
    assert any("does not parse" in problem for problem in checked.json["problems"]), checked.json
    recovered = rig("--json", "state", "recover")
    assert recovered.returncode == 0, recovered
    assert recovered.json["recovered"] is True and "workflow_node_runs" in recovered.json["incomplete"]
    assert 0 < recovered.json["tables"]["workflow_node_runs"] < runs  # the damaged rows are left out
    assert rig("--json", "state", "check").json["ok"] is True
    assert rig("apply").returncode == 0  # what was lost runs again
