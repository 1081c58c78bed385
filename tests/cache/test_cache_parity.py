"""Every command whose row in the command table may take an answer from the cache prints the same with and
without it — stdout, stderr and exit code — in every state a project can be in.

The command lines come from the table: each row with ``cache=`` must have its lines in ``LINES`` (a
row added without them fails ``test_every_row_that_may_answer_from_the_cache_is_compared``). Each
line runs three times through the installed ``rig``: with ``RIG_CACHE=off`` (every answer computed,
none kept), then twice with the cache (the first may compute and keep, the second may recall), and
all three must agree. The states: fresh, cached, pending, a ``cache_ttl`` run out by real time,
invalidated, cleared, a run killed mid-way, a workspace's machine missing, a damaged state file,
the state changed by another rig on PostgreSQL, and docker workspaces running, stopped and missing.
"""

from __future__ import annotations

import json
import marshal
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cache.parity import ENV, LINES, cached_rows, compare, loads, rig
from tests.cli.cli_support import write_project
from tests.helpers import wait_for
from tests.pg_server import PostgresServer, unique_schema

# Each import of the config appends a line to loads.txt: how a test sees whether rig loaded it.
LOCAL_CONFIG = """
import os
import time
from pathlib import Path

from rigcli import define_provider, workflow

with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")

VERSION = os.environ.get("RIG_PARITY_VERSION", "1")
app = workflow("dev", providers={"box": define_provider("local")})


def base(step, box):
    machine = box.create_machine()
    machine.exec("echo base > base.txt")
    return {"ctx": {"snapshot": machine.snapshot_ref()}}


def build(step):
    print("building version", VERSION)
    return {"ctx": {**step.ctx, "version": VERSION}}


def stamp(step):
    print("stamped")
    if os.environ.get("RIG_PARITY_SLOW") == "1":
        time.sleep(60)
    return {"ctx": step.ctx}


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["snapshot"])
    return {"machine": machine.id, "path": machine.path}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = (
    app.sequence("dev")
    .task("base", base)
    .task("build", build, version=VERSION)
    .task("stamp", stamp, cache_ttl="3s" if os.environ.get("RIG_PARITY_TTL") else None,
          version="slow" if os.environ.get("RIG_PARITY_SLOW") == "1" else None)
    .workspace(create=create, remove=remove)
)
"""


def test_every_row_that_may_answer_from_the_cache_is_compared() -> None:
    rows = list(cached_rows())
    assert {row.name for row in rows} == set(LINES), "give each row with cache= its lines in LINES"


def applied(project: Path, **env: str) -> None:
    for argv in (("apply",), ("fork", "ws")):
        result = rig(project, *argv, **env)
        assert result.returncode == 0, result


def _fresh(project: Path) -> dict[str, str]:
    return {}


def _cached(project: Path) -> dict[str, str]:
    applied(project)
    return {}


def _pending(project: Path) -> dict[str, str]:
    applied(project)
    return {"RIG_PARITY_VERSION": "2"}  # the config reads it: build's version changes


def _ttl_expired(project: Path) -> dict[str, str]:
    applied(project, RIG_PARITY_TTL="1")
    rig(project, "plan", RIG_PARITY_TTL="1")  # remembered while the run is young
    time.sleep(3.5)  # the stamp task's cache_ttl runs out by real time
    return {"RIG_PARITY_TTL": "1"}


def _invalidated(project: Path) -> dict[str, str]:
    applied(project)
    rig(project, "plan")
    assert rig(project, "cache", "invalidate", "build", "--yes").returncode == 0
    return {}


def _cleared(project: Path) -> dict[str, str]:
    applied(project)
    rig(project, "plan")
    assert rig(project, "cache", "clear", "--yes").returncode == 0
    return {}


def _killed_midway(project: Path) -> dict[str, str]:
    applied(project)
    rig(project, "plan")
    state = project / ".rig" / "state.sqlite"
    env = {**os.environ, **ENV, "RIG_PARITY_SLOW": "1"}
    from tests.cli.cli_support import RIG

    process = subprocess.Popen([RIG, "apply"], cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        import sqlite3

        def running() -> bool:
            with sqlite3.connect(state) as db:
                return db.execute("SELECT count(*) FROM workflow_node_runs WHERE status = 'running'").fetchone()[0] > 0

        wait_for(running, "the stamp task to be recorded running")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    return {"RIG_PARITY_SLOW": "1"}


def _machine_missing(project: Path) -> dict[str, str]:
    applied(project)
    rig(project, "ls")
    document = json.loads(rig(project, "--json", "ls", "--no-probe").stdout)
    (machine,) = [item["ctx"]["path"] for flow in document["workflows"] for item in flow["workspaces"]]
    subprocess.run(["rm", "-rf", machine], check=True)
    return {}


def _damaged(project: Path) -> dict[str, str]:
    applied(project)
    rig(project, "plan")
    rig(project, "ls")
    state = project / ".rig" / "state.sqlite"
    for name in (state.name + "-wal", state.name + "-shm"):
        (state.parent / name).unlink(missing_ok=True)
    data = bytearray(state.read_bytes())
    data[4096 : 4096 + 64] = b"\xff" * 64  # a page of the tables torn
    state.write_bytes(bytes(data))
    return {}


STATES: dict[str, Callable[[Path], dict[str, str]]] = {
    "fresh": _fresh,
    "cached": _cached,
    "pending": _pending,
    "ttl-expired": _ttl_expired,
    "invalidated": _invalidated,
    "cleared": _cleared,
    "killed-midway": _killed_midway,
    "machine-missing": _machine_missing,
    "damaged": _damaged,
}


@pytest.mark.parametrize("state", list(STATES))
def test_each_cached_command_prints_the_same_both_ways(tmp_path: Path, state: str) -> None:
    project = write_project(tmp_path / "parity", LOCAL_CONFIG)
    env = STATES[state](project)
    assert compare(project, env) == []


def test_a_remembered_answer_is_used_and_one_made_to_differ_is_caught(tmp_path: Path) -> None:
    project = write_project(tmp_path / "parity", LOCAL_CONFIG)
    applied(project)
    for argv in (("plan",), ("ls",), ("logs", "build"), ("exec", "ws", "--", "true")):
        rig(project, *argv)
        before = loads(project)
        assert rig(project, *argv).returncode == 0
        assert loads(project) == before, f"rig {' '.join(argv)} loaded the config: the cache did not answer"
    # Tamper with the remembered plan: the comparison must see it (and so would see any drift).
    (memo,) = (Path(os.environ["RIG_HOME"]) / "cache" / "answers").glob("*.marshal")
    data = marshal.loads(memo.read_bytes())
    data["answers"]["plan"]["document"]["nodes"][0]["name"] = "tampered"
    memo.write_bytes(marshal.dumps(data))
    differences = compare(project, {})
    assert any(line.startswith("rig --json plan:") and "tampered" in line for line in differences), differences


def test_another_rig_changing_shared_postgresql_state_is_seen_both_ways(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.url(unique_schema())
    mine = write_project(tmp_path / "mine", LOCAL_CONFIG)
    theirs = write_project(tmp_path / "theirs", LOCAL_CONFIG)
    env = {"RIG_STATE_URL": url}
    applied(mine, **env)
    assert compare(mine, env) == []
    result = rig(theirs, "apply", RIG_STATE_URL=url, RIG_PARITY_VERSION="3")
    assert result.returncode == 0, result
    assert compare(mine, env) == []
