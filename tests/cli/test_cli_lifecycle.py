"""End to end on the starter project, plus the state lock (--no-wait) and Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from tests.cli.cli_support import RIG, SLOW_CONFIG, env_with_rig, run_rig, write_project


def test_init_apply_fork_op_rm_in_an_empty_directory(tmp_path: Path) -> None:
    for args in (["init"], ["apply"], ["fork", "demo"]):
        result = run_rig(*args, cwd=tmp_path)
        assert result.returncode == 0, result
    assert run_rig("plan", "--json", cwd=tmp_path).json["cached_node_count"] == 1
    ran = run_rig("op", "demo", "show", "src/README", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran
    assert ran.json == {"path": "src/README", "text": "hello from rig\n"}
    human = run_rig("op", "demo", "show", cwd=tmp_path)
    assert "    hello from rig" in human.stderr.splitlines()  # the command's output, streamed on stderr
    assert human.stdout == '{\n  "path": "src/README",\n  "text": "hello from rig\\n"\n}\n'
    [workflow] = run_rig("ls", "--json", cwd=tmp_path).json["workflows"]
    [workspace] = workflow["workspaces"]
    assert Path(workspace["ctx"]["path"]).is_dir()
    removed = run_rig("rm", "demo", "--yes", "--json", cwd=tmp_path)
    assert removed.returncode == 0, removed
    assert not Path(workspace["ctx"]["path"]).exists()
    assert run_rig("rm", "demo", "--yes", cwd=tmp_path).returncode == 1


def _start_slow_apply(project: Path, seconds: float) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [RIG, "apply"], cwd=project, env=env_with_rig(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    seen = ""
    while "waiting" not in seen and time.monotonic() < deadline:
        seen += process.stderr.readline()
    assert "waiting" in seen, seen
    return process


def test_no_wait_exits_4_while_another_rig_holds_the_lock(tmp_path: Path) -> None:
    project = write_project(tmp_path / "slow", SLOW_CONFIG.format(seconds=5))
    holder = _start_slow_apply(project, 5)
    try:
        result = run_rig("--no-wait", "apply", cwd=project, subprocess=True)
        assert result.returncode == 4, result
        assert result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith("error: ") and "locked" in line and str(holder.pid) in line
        reader = run_rig("plan", "--json", cwd=project, timeout=10, subprocess=True)  # reads never wait for the lock
        assert reader.returncode == 0, reader
    finally:
        holder.kill()
        holder.wait()


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    project = write_project(tmp_path / "slow", SLOW_CONFIG.format(seconds=30))
    process = _start_slow_apply(project, 30)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert stdout == ""
    assert "Traceback" not in stderr
    assert len([line for line in stderr.splitlines() if line.startswith("error: ")]) == 1


_HELD_CONFIG = """
import time
from pathlib import Path

from rigcli import workflow

app = workflow("held")


def hold(step):
    print("waiting", flush=True)
    deadline = time.monotonic() + 120
    while not Path("release").exists() and time.monotonic() < deadline:  # held until the test says so
        time.sleep(0.05)
    return {"ctx": {"held": True}}


workflows = app.sequence("held").task("hold", hold, cache_ttl=0)
"""


def test_a_second_writer_waits_and_says_who_holds_the_lock(tmp_path: Path) -> None:
    # The first apply holds the lock until the second has said it waits: however slow the machine,
    # the second cannot miss it (a fixed sleep could end before the second rig got there).
    project = write_project(tmp_path / "held", _HELD_CONFIG)
    holder = _start_slow_apply(project, 120)
    waiter = subprocess.Popen(
        [RIG, "apply"], cwd=project, env=env_with_rig(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert waiter.stderr is not None
        said = ""
        deadline = time.monotonic() + 60
        while "waiting for the state lock" not in said and time.monotonic() < deadline and waiter.poll() is None:
            said += waiter.stderr.readline()
        (project / "release").touch()
        _, rest = waiter.communicate(timeout=60)
        assert waiter.returncode == 0, said + rest
        assert f"waiting for the state lock held by rig apply (pid {holder.pid}" in said + rest
    finally:
        (project / "release").touch()
        holder.wait(timeout=60)
        waiter.kill()
        waiter.wait()


def test_a_read_opens_the_state_while_another_connection_writes_to_it(tmp_path: Path) -> None:
    # Opening a migrated state takes no write transaction: a reader never waits for a writer (before,
    # every open began one per migration and failed once SQLite's busy timeout ran out).
    import sqlite3

    project = write_project(tmp_path / "slow", SLOW_CONFIG.format(seconds=0))
    assert run_rig("apply", cwd=project, subprocess=True).returncode == 0
    writer = sqlite3.connect(project / ".rig" / "state.sqlite", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        reader = run_rig("--json", "plan", cwd=project, timeout=60, subprocess=True)
        assert reader.returncode == 0, reader
        assert reader.json["cached_node_count"] == 0  # cache_ttl=0: never cached, but read all the same
    finally:
        writer.execute("ROLLBACK")
        writer.close()
