"""Config sources shared by several engine test modules."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

SCHEMA_CONFIG = """
import os

from rigcli import define_provider, workflow

app = workflow("test", providers={"test": define_provider("test", {"token": "test-key"})})


class Schema:
    def parse(self, value):
        if not isinstance(value, dict):
            raise ValueError("not an object")
        if os.environ.get("RIG_SCHEMA_MODE") == "next" and value.get("next") is not True:
            raise ValueError("missing next")
        return value


schema = Schema()


async def value():
    if os.environ.get("RIG_SCHEMA_MODE") == "next":
        return {"ctx": {"value": "ok", "next": True}}
    return {"ctx": {"value": "ok"}}


workflows = app.sequence("schema").task("value", value, output=schema)
"""

TTL_CONFIG = """
from rigcli import sequence


async def daily_check():
    return {"ctx": {"checked": True}}


workflows = sequence("ttl").task("daily-check", daily_check, cache_ttl="1d")
"""


def two_days_ago() -> str:
    return (datetime.now(timezone.utc) - timedelta(days=2)).isoformat()


TERMINAL_CONFIG = """
from rigcli import define_provider, workflow

app = workflow("test", providers={"test": define_provider("test", {"token": "test-key"})})


async def login(test):
    result = await test.open_terminal("GitHub auth", "gh auth login")
    return {"ctx": {"finished": result["finished"]}}


workflows = app.sequence("auth").task("login", login)
"""


def meeting_branches(workflow: str, task: str, then: str) -> str:
    """The ``workflows`` binding of a config whose ``left_<task>`` and ``right_<task>`` handlers run as
    the parallel branches ``left`` and ``right`` of ``app`` (they meet at the fake provider's
    barrier), followed by the task ``then``. Append it to the source that defines those handlers."""
    return f"""


workflows = (
    app.sequence("{workflow}")
    .parallel(
        left=app.sequence("left").task("{task}", left_{task}),
        right=app.sequence("right").task("{task}", right_{task}),
    )
    .task("{then}", {then})
)
"""


LEGACY_WORKSPACES = """
CREATE TABLE workspaces (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  vm_id TEXT NOT NULL,
  machine TEXT NOT NULL,
  snapshot_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  metadata_json TEXT NOT NULL
)
"""


def write_legacy_state(project_dir: Path) -> Path:
    """Write a state database from before rig's current schema at ``.rig/state.sqlite``; return its path."""
    state_path = project_dir / ".rig" / "state.sqlite"
    state_path.parent.mkdir(parents=True, exist_ok=True)
    legacy = sqlite3.connect(str(state_path))
    with legacy:
        legacy.execute(LEGACY_WORKSPACES)
        legacy.execute(
            "INSERT INTO workspaces (id, name, provider_id, vm_id, machine, snapshot_id, created_at, updated_at,"
            " metadata_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
    legacy.close()
    return state_path


__all__ = [
    "LEGACY_WORKSPACES",
    "SCHEMA_CONFIG",
    "TERMINAL_CONFIG",
    "TTL_CONFIG",
    "meeting_branches",
    "two_days_ago",
    "write_legacy_state",
]
