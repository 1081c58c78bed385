"""A team on one PostgreSQL state, through the installed `rig`: two clones at different paths, with
different RIG_HOMEs and users, share runs and workspaces; a killed or cut-off writer never wedges
the lock; concurrent writers run each task once. Every scenario checks the database's rows as
well as what rig printed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from rigcli.state.postgres.url import mask_url
from rigcli.state.process import this_host
from tests.backends import rows
from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig_process, write_project
from tests.helpers import runs, wait_for

TEAM_CONFIG = """
import os
import time
from pathlib import Path

from rigcli import workflow

app = workflow("team")


def _mark(name):
    # One file per run of a task, so a test can count runs across processes and clones.
    marks = os.environ.get("RIG_TEST_MARKS")
    if marks:
        Path(marks, f"{name}.{os.getpid()}.{time.monotonic_ns()}").touch()
    time.sleep(float(os.environ.get(f"RIG_TEST_SLEEP_{name.upper()}", "0")))


def toolchain(step):
    _mark("toolchain")
    return {"ctx": {"toolchain": "ok"}}


def deps(step):
    _mark("deps")
    return {"ctx": {**step.ctx, "deps": "ok"}}


def warm(step):
    _mark("warm")
    return {"ctx": {**step.ctx, "warm": "ok"}}


def create(workflow, workspace):
    return {"name": workspace.name, "from": sorted(workflow.ctx)}


workflows = app.sequence("team").task("toolchain", toolchain).task("deps", deps).task("warm", warm).workspace(
    create=create
)
"""
TASKS = ["deps", "toolchain", "warm"]


@dataclass
class Clone:
    """One developer's checkout: its own path, RIG_HOME and OS user, the team's state URL in .env."""

    dir: Path
    user: str
    home: Path
    marks: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "RIG_HOME": str(self.home),
            "RIG_HOST_STORAGE_DIR": str(self.home / "providers"),
            "USER": self.user,
            "LOGNAME": self.user,
            "RIG_TEST_MARKS": str(self.marks),
            "RIG_RENDER": "0",
            **extra,
        }

    def rig(self, *args: str, timeout: float = 120, **extra: str) -> Result:
        return run_rig_process(*args, cwd=self.dir, env=self.env(**extra), timeout=timeout)

    def start(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [RIG, *args],
            cwd=self.dir,
            env=env_with_rig(self.env(**extra)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    @property
    def owner(self) -> str:
        return f"{self.user}@{this_host()}"


@pytest.fixture
def team(tmp_path: Path, postgres_server: Any) -> tuple[str, Clone, Clone]:
    from tests.pg_server import unique_schema

    schema = unique_schema("team")
    url = str(postgres_server.url(schema, fragments_schema=f"{schema}_fragments"))
    marks = tmp_path / "marks"
    marks.mkdir()
    clones = []
    for name, user in (("alice-checkout", "alice"), ("bob/work/checkout", "bob")):
        directory = write_project(tmp_path / name, TEAM_CONFIG, **{".env": f"RIG_STATE_URL={url}\n"})
        clones.append(Clone(directory, user, tmp_path / f"home-{user}", marks))
    return url, clones[0], clones[1]


def _marks(clone: Clone) -> list[str]:
    return sorted(path.name.split(".")[0] for path in clone.marks.iterdir())


class _Stderr:
    """The lines a process writes to stderr, read by a thread as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        stream = process.stderr
        assert stream is not None
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line)

    def says(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def all(self) -> str:
        """Everything, once the process has ended."""
        self._reader.join(timeout=20)
        return "".join(self.lines)


def _clean(result: Result, password: str) -> None:
    assert "Traceback" not in result.stderr, result
    assert password not in result.stdout + result.stderr, result


def test_clone_b_plans_all_cached_from_clone_a_and_forks(team: tuple[str, Clone, Clone], postgres_server: Any) -> None:
    url, alice, bob = team
    applied = alice.rig("--json", "apply")
    assert applied.returncode == 0, applied
    assert runs(url) == [(task, "succeeded") for task in TASKS]

    plan = bob.rig("--json", "plan")
    assert plan.returncode == 0, plan
    assert (plan.json["cached_node_count"], plan.json["node_count"]) == (3, 3)
    forked = bob.rig("--json", "fork", "bob-dev")
    assert forked.returncode == 0, forked
    assert forked.json["owner"] == bob.owner
    assert _marks(alice) == TASKS  # bob's apply reused every run alice made
    assert runs(url) == [(task, "succeeded") for task in TASKS]
    assert rows(url, "SELECT name, status, owner FROM workspaces") == [("bob-dev", "ready", bob.owner)]
    # project.dir is the last writer's, not a check: bob's clone lives elsewhere.
    assert rows(url, "SELECT value_json FROM runtime_metadata WHERE key = 'project.dir'") == [
        (json.dumps(str(bob.dir)),)
    ]

    listed = alice.rig("--json", "ls")
    assert listed.json["state"] == {"backend": "postgresql", "url": mask_url(url)}
    [workspace] = listed.json["workflows"][0]["workspaces"]
    assert (workspace["name"], workspace["owner"]) == ("bob-dev", bob.owner)
    assert re.search(rf"^bob-dev\s+ready\s+{re.escape(bob.owner)}\s", alice.rig("ls").stdout, re.MULTILINE)

    refused = alice.rig("rm", "bob-dev")
    assert refused.returncode == 1 and f"workspace bob-dev belongs to {bob.owner}" in refused.stderr, refused
    removed = alice.rig("rm", "bob-dev", "--yes")
    assert removed.returncode == 0, removed
    assert f"workspace bob-dev belongs to {bob.owner}; removing it" in removed.stderr
    assert rows(url, "SELECT COUNT(*) FROM workspaces") == [(0,)]
    for result in (applied, plan, forked, listed, refused, removed):
        _clean(result, postgres_server.password)


def test_a_writer_killed_holding_the_lock_frees_it_and_b_applies_at_once(
    team: tuple[str, Clone, Clone], postgres_server: Any
) -> None:
    url, alice, bob = team
    holder = alice.start("apply", RIG_TEST_SLEEP_DEPS="60")
    try:
        wait_for(lambda: "deps" in _marks(alice), "alice's apply to reach deps", timeout=60, interval=0.05)
        seen = bob.rig("--json", "ls").json["lock"]
        assert (seen["pid"], seen["user"], seen["command"]) == (holder.pid, "alice", "apply")
        assert bob.rig("--no-wait", "apply").returncode == 4  # held: a clean refusal
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    started = time.monotonic()
    after = bob.rig("--no-wait", "apply")
    assert after.returncode == 0, after
    assert time.monotonic() - started < 20
    assert f"took over the state lock from rig apply (pid {holder.pid}" in after.stderr
    # alice's deps run was cut off (in doubt, never reused); bob ran it again and, in the same
    # transaction, closed hers "abandoned" with the evidence and the run that superseded it.
    runs = rows(url, "SELECT node_path, status, pid, error FROM workflow_node_runs WHERE node_path = 'deps' ORDER BY 2")
    assert [(path, status) for path, status, _, _ in runs] == [("deps", "abandoned"), ("deps", "succeeded")]
    assert runs[0][2] == holder.pid
    [(new_run,)] = rows(url, "SELECT id FROM workflow_node_runs WHERE node_path = 'deps' AND status = 'succeeded'")
    assert runs[0][3].startswith(f"rig pid {holder.pid} on ") and runs[0][3].endswith(f"; superseded by run {new_run}")
    assert rows(url, "SELECT COUNT(*) FROM runtime_metadata WHERE key LIKE 'lock.holder%'") == [(0,)]
    assert bob.rig("--json", "ls").json["lock"] is None
    _clean(after, postgres_server.password)


def test_a_waiter_says_who_holds_the_lock_and_ctrl_c_ends_the_wait(team: tuple[str, Clone, Clone]) -> None:
    url, alice, bob = team
    holder = alice.start("apply", RIG_TEST_SLEEP_DEPS="60")
    waiter: subprocess.Popen[str] | None = None
    try:
        wait_for(lambda: "deps" in _marks(alice), "alice's apply to reach deps", timeout=60, interval=0.05)
        waiter = bob.start("apply")
        assert rows(url, "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'")[0][0] >= 1  # alice's
        seen = _Stderr(waiter)
        # Signalled once it waits (not after a guess at how long starting takes on a busy machine).
        wait_for(lambda: seen.says("waiting for the state lock"), "bob to wait for the lock", timeout=60)
        waiter.send_signal(signal.SIGINT)
        assert waiter.wait(timeout=20) == 130, seen.lines
        stderr = seen.all()
        assert f"waiting for the state lock held by rig apply (pid {holder.pid} on {this_host()} by alice)" in stderr
        assert "Traceback" not in stderr
        assert holder.poll() is None  # the holder is untouched, and bob started nothing
        assert _marks(bob) == ["deps", "toolchain"]
    finally:
        for proc in (holder, waiter):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_eight_concurrent_writers_from_two_clones_run_every_task_once(
    team: tuple[str, Clone, Clone], postgres_server: Any
) -> None:
    url, alice, bob = team
    slow = {"RIG_TEST_SLEEP_TOOLCHAIN": "0.5", "RIG_TEST_SLEEP_DEPS": "0.5", "RIG_TEST_SLEEP_WARM": "0.5"}
    writers = [(alice if index % 2 else bob).start("--json", "apply", **slow) for index in range(8)]
    results = [(proc.returncode, *proc.communicate(timeout=180)) for proc in writers]
    results = [(proc.wait(), out, err) for proc, (_, out, err) in zip(writers, results, strict=True)]
    for code, out, err in results:
        assert code == 0, err
        assert json.loads(out)["workflow"] == "team"
        lines = [line for line in err.splitlines() if line.strip()]
        assert not [line for line in lines if line.startswith("error")], err
        assert "Traceback" not in err and postgres_server.password not in out + err
    waited = sum("waiting for the state lock held by rig apply" in err for _, _, err in results)
    assert waited >= 1  # they did contend, and waited cleanly
    assert _marks(alice) == TASKS  # every task ran exactly once, in one of the eight
    assert runs(url) == [(task, "succeeded") for task in TASKS]
    assert rows(url, "SELECT cached_node_count, node_count FROM workflow_applies") == [(3, 3)]


def test_the_server_stopped_mid_apply_is_a_clear_error_then_the_next_apply_converges(
    team: tuple[str, Clone, Clone], postgres_server: Any
) -> None:
    url, alice, _ = team
    writer = alice.start("apply", RIG_TEST_SLEEP_DEPS="3")
    try:
        wait_for(lambda: "deps" in _marks(alice), "the apply to reach deps", timeout=60, interval=0.05)
        postgres_server.stop()
        _, stderr = writer.communicate(timeout=60)
    finally:
        if postgres_server.pid is None:
            postgres_server.start()
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert writer.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and mask_url(url).split("?")[0] in errors[0], stderr
    assert "Traceback" not in stderr and postgres_server.password not in stderr

    # The cut-off run is in doubt: never reused, shown as such, and the next apply runs it again.
    assert ("deps", "running") in runs(url)
    plan = alice.rig("--json", "plan").json
    assert {node["path"]: node["reason"]["code"] for node in plan["nodes"]}["deps"] == "in-doubt"
    again = alice.rig("apply")
    assert again.returncode == 0, again
    final = alice.rig("--json", "plan").json
    assert (final["cached_node_count"], final["node_count"]) == (3, 3)
    # The cut-off run is closed "abandoned" by the apply that ran the node again (issue 17, defect 13).
    assert runs(url) == [
        ("deps", "abandoned"),
        ("deps", "succeeded"),
        ("toolchain", "succeeded"),
        ("warm", "succeeded"),
    ]
