"""Damaged state databases: one page's header overwritten, then the common commands run against it.

A base project is applied, forked and applied again so that every table of ``.rig/state.sqlite``
spans pages of its own (interior, leaf and overflow pages). Each damage is a copy of that database
with the b-tree header of one page (page 1's sits after the 100-byte file header) overwritten at a
chosen offset, kept only if SQLite's ``PRAGMA integrity_check`` then finds it damaged. Every
command of ``COMMANDS`` runs against it in turn; none may exit 3 (an internal error), none may
write into the file (its bytes, compared before and after, and no write-ahead log left beside
it), and none may move it aside for a fresh database. Then ``rig state recover`` must give the
project a file that passes ``rig state check`` and on which ``rig apply`` succeeds, the damaged one
kept beside it byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import sqlite3
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.cli.cli_support import Result, run_rig

PAGE_SIZE = 4096
CONFIG = """
from rigcli import workflow

app = workflow("damaged")


def grow(index):
    def task(step):
        return {"ctx": {**step.ctx, f"k{index}": "v" * (97 * index)}}

    return task


def create(workflow, workspace):
    return {"name": workspace.name, "keys": sorted(workflow.ctx)}


def remove(workspace):
    pass


sequence = app.sequence("damaged")
for index in range(24):
    sequence = sequence.task(f"t{index}", grow(index), cache_ttl=0 if index % 3 == 0 else None)
workflows = sequence.workspace(create=create, remove=remove)
"""

# (name, argv): what a user runs day to day, writers and readers alike.
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("plan", ("plan",)),
    ("json plan", ("--json", "plan")),
    ("apply", ("apply",)),
    ("ls", ("ls",)),
    ("fork", ("fork", "fresh")),
    ("rm", ("rm", "ws1", "--yes")),
    ("cache ls", ("cache", "ls")),
    ("cache explain", ("cache", "explain")),
    ("cache clear", ("cache", "clear", "--yes")),
    ("gc", ("gc",)),
    ("state copy", ("state", "copy", "--to", "{copy}")),
    ("doctor", ("doctor",)),
    ("state check", ("state", "check")),
)


@dataclass(frozen=True)
class Damage:
    index: int
    page: int
    offset: int  # within the page
    data: bytes

    def __str__(self) -> str:
        return f"#{self.index} page {self.page} +{self.offset} <- {self.data.hex()}"


@dataclass
class Recovery:
    damage: Damage
    recovered: bool  # state recover, then state check and apply, each exit 0
    kept: bool  # the damaged file is kept beside the new one, byte for byte
    detail: str  # the first failing command, when not recovered

    @property
    def clean(self) -> bool:
        return self.recovered and self.kept


@dataclass
class Outcome:
    damage: Damage
    command: str
    exit_code: int
    error: str  # the first error line
    wrote: bool  # the file's bytes changed, or a write-ahead log with frames was left beside it
    replaced: bool  # the file is gone from where it was (moved aside)

    @property
    def clean(self) -> bool:
        return self.exit_code != 3 and not self.wrote and not self.replaced


class CorruptProject:
    """The base project and its pristine database, copied for each damage."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base = root / "base"
        self.base.mkdir(parents=True)
        (self.base / "rig_config.py").write_text(textwrap.dedent(CONFIG).lstrip())
        self.env = {
            "RIG_HOME": str(root / "rig-home"),
            "RIG_HOST_STORAGE_DIR": str(root / "rig-home" / "providers"),
            "RIG_RENDER": "0",
            "NO_COLOR": "1",
            "RIG_NO_BROWSER": "1",
        }
        for args in (("apply",), ("fork", "ws1"), ("fork", "ws2"), ("apply",), ("fork", "ws3"), ("apply",)):
            result = self.rig(self.base, *args)
            assert result.returncode == 0, f"building the base project: {result}"
        self.database = self.base / ".rig" / "state.sqlite"
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.pages = int(db.execute("PRAGMA page_count").fetchone()[0])
            assert int(db.execute("PRAGMA page_size").fetchone()[0]) == PAGE_SIZE
        self.pristine = self.database.read_bytes()

    def rig(self, project: Path, *args: str) -> Result:
        return run_rig(*args, cwd=project, env=self.env, subprocess=True, timeout=120)

    def damages(self, count: int, rng: random.Random) -> list[Damage]:
        """``count`` damages that SQLite's integrity check finds, each on another page where it can."""
        found: list[Damage] = []
        pages = list(range(1, self.pages + 1))
        rng.shuffle(pages)
        attempts = 0
        while len(found) < count and attempts < count * 50:
            attempts += 1
            page = pages[attempts % len(pages)]
            header = 100 if page == 1 else 0  # page 1 starts with the file header
            offset = header + rng.randrange(0, 8)
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
            damage = Damage(len(found), page, offset, data)
            if self._detected(damage) and all((d.page, d.offset) != (page, offset) for d in found):
                found.append(damage)
        return found

    def _damaged_bytes(self, damage: Damage, pristine: bytes | None = None) -> bytes:
        image = bytearray(self.pristine if pristine is None else pristine)
        start = (damage.page - 1) * PAGE_SIZE + damage.offset
        image[start : start + len(damage.data)] = damage.data
        return bytes(image)

    def _detected(self, damage: Damage) -> bool:
        probe = self.root / "probe.sqlite"
        probe.write_bytes(self._damaged_bytes(damage))
        try:
            with contextlib.closing(sqlite3.connect(f"file:{probe}?mode=ro", uri=True)) as db:
                return [row[0] for row in db.execute("PRAGMA integrity_check")] != ["ok"]
        except sqlite3.DatabaseError:
            return True
        finally:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{probe}{suffix}")

    def sweep(self, damage: Damage, commands: tuple[tuple[str, tuple[str, ...]], ...]) -> list[Outcome]:
        """Every command against one copy of the project with this damage, each one meeting it first.

        The copy is settled before it is damaged (a read-only rig command records the project's new
        directory, as it would for a user who moved it), so the damage is the only difference. The
        marker a command leaves is removed before the next one: each must find the damage itself.
        """
        project = self.root / f"damaged-{damage.index}"
        shutil.copytree(self.base, project)
        database = project / ".rig" / "state.sqlite"
        settled = self.rig(project, "ls")
        assert settled.returncode == 0, f"settling the copy: {settled}"
        with contextlib.closing(sqlite3.connect(database)) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        image = self._damaged_bytes(damage, database.read_bytes())
        database.write_bytes(image)
        digest = hashlib.sha256(image).hexdigest()
        outcomes = []
        for name, argv in commands:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{database}.damaged")
            args = [arg.format(copy=self.root / f"copy-{damage.index}-{len(outcomes)}.sqlite") for arg in argv]
            result = self.rig(project, *args)
            replaced = not database.exists()
            wrote = not replaced and hashlib.sha256(database.read_bytes()).hexdigest() != digest
            wal = Path(f"{database}-wal")
            wrote = wrote or (wal.exists() and wal.stat().st_size > 0)
            error = next(iter(result.error_lines), "")
            outcomes.append(Outcome(damage, name, result.returncode, error, wrote, replaced))
            if replaced or wrote:  # the next command must meet the damage, not what this one left
                for suffix in ("-wal", "-shm"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{database}{suffix}")
                database.write_bytes(image)
        return outcomes

    def recover(self, damage: Damage) -> Recovery:
        """``rig state recover`` on the copy ``sweep`` left, then the project must work again."""
        project = self.root / f"damaged-{damage.index}"
        database = project / ".rig" / "state.sqlite"
        image = database.read_bytes()
        try:
            for args in (("state", "recover"), ("state", "check"), ("apply",)):
                result = self.rig(project, *args)
                if result.returncode != 0:
                    return Recovery(damage, False, False, f"rig {' '.join(args)}: {result}")
            backups = database.parent.glob("state.sqlite.damaged-*")
            kept = [path.read_bytes() for path in backups if not path.name.endswith(("-wal", "-shm"))]
            return Recovery(damage, True, kept == [image], "")
        finally:
            shutil.rmtree(project, ignore_errors=True)


def summarize(outcomes: list[Outcome], recoveries: Sequence[Recovery] = ()) -> list[str]:
    """Per command: runs, exit codes, writes and replacements; then the totals and the recoveries."""
    lines = []
    for name in dict.fromkeys(outcome.command for outcome in outcomes):
        group = [outcome for outcome in outcomes if outcome.command == name]
        codes = Counter(outcome.exit_code for outcome in group)
        lines.append(
            f"{name:14} runs={len(group)} exits={dict(sorted(codes.items()))} "
            f"writes={sum(o.wrote for o in group)} replaced={sum(o.replaced for o in group)}"
        )
    damages = {outcome.damage.index for outcome in outcomes}
    lines.append(
        f"total damaged-databases={len(damages)} runs={len(outcomes)} "
        f"exit-3={sum(o.exit_code == 3 for o in outcomes)} writes={sum(o.wrote for o in outcomes)} "
        f"replaced={sum(o.replaced for o in outcomes)} not-clean={sum(not o.clean for o in outcomes)}"
    )
    if recoveries:
        lines.append(
            f"state recover  databases={len(recoveries)} recovered={sum(r.recovered for r in recoveries)} "
            f"damaged-file-kept={sum(r.kept for r in recoveries)}"
        )
    return lines


__all__ = ["COMMANDS", "CorruptProject", "Damage", "Outcome", "Recovery", "summarize"]
