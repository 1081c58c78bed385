"""The run journal as the engine sees it: in-doubt runs are shown and never reused."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

from rigcli import create_engine

CONFIG = """
from rigcli import sequence
workflows = sequence("journal").task("only", lambda step: {"ctx": {"done": True}})
"""


def test_a_run_left_running_by_a_dead_process_is_in_doubt_and_never_reused(tmp_path: Path) -> None:
    (tmp_path / "rig_config.py").write_text(CONFIG)

    async def scenario() -> None:
        engine = create_engine(tmp_path)
        await engine.load()
        await engine.planner.apply()
        run_id = engine.project.node_runs()[0].id
        engine.close()

        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        with sqlite3.connect(tmp_path / ".rig" / "state.sqlite") as db:
            db.execute("UPDATE workflow_node_runs SET status = 'running', pid = ? WHERE id = ?", (dead.pid, run_id))

        engine = create_engine(tmp_path)
        await engine.load()
        entries = await engine.cache.list_cache()
        assert [(entry.run_id, entry.status) for entry in entries] == [(run_id, "in-doubt")]
        plan = await engine.planner.plan()
        assert [(node.status, node.reason.code) for node in plan.nodes] == [("pending", "in-doubt")]
        explained = await engine.cache.explain()
        assert [(item.status, item.reason.code) for item in explained] == [("pending", "in-doubt")]
        engine.close()

    asyncio.run(scenario())
