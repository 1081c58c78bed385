"""rig logs and rig runs through the installed rig: every run's output kept, masked, followed live."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from tests.backends import rows
from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig, run_rig_masked, write_project
from tests.helpers import wait_for

TOKEN = "tok-7f3a9c21e5d84b06"
LOGS_CONFIG = """
import os

from rigcli import define_provider, secret, workflow

app = workflow("logs", providers={"box": define_provider("local", env={"TOKEN": secret("RIG_TEST_TOKEN")})})


def build(step, box):
    print("building")
    machine = box.create_machine()
    machine.exec('echo "token=$TOKEN"; for i in $(seq 1 12); do echo "line $i"; done; echo warn >&2')
    step.metadata({"version": "1.2", "token": os.environ["RIG_TEST_TOKEN"]})
    gate = os.environ.get("RIG_TEST_GATE")
    if gate:
        machine.exec(f"echo waiting; while [ ! -e {gate} ]; do sleep 0.05; done; echo released")
    machine.delete()
    return {"ctx": {"built": 1}}


def check(step, box):
    machine = box.create_machine()
    machine.exec("echo checked")
    machine.delete()
    if os.environ.get("RIG_TEST_FAIL"):
        raise RuntimeError("check failed on purpose")
    return {"ctx": dict(step.ctx)}


workflows = app.sequence("logs").task("build", build).task("check", check)
"""
ENV = {"RIG_TEST_TOKEN": TOKEN, "RIG_RENDER": "0"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "logs-project", LOGS_CONFIG)


def rig(project: Path, *args: str, code: int = 0, **env: str) -> Result:
    return run_rig_masked(project, args, env={**ENV, **env}, secret=TOKEN, code=code)


def _printed(stderr: str, task: str) -> list[str]:
    """The lines plain output showed for ``task`` (``    task | line``), without the prefix."""
    prefix = f"    {task} | "
    return [line.removeprefix(prefix) for line in stderr.splitlines() if line.startswith(prefix)]


def test_logs_of_a_task_are_what_it_printed_with_commands_exit_codes_and_secrets_masked(project: Path) -> None:
    applied = rig(project, "apply")
    printed = _printed(applied.stderr, "build")
    assert "token=***" in printed and "line 12" in printed

    logs = rig(project, "logs", "build").stdout.splitlines()
    # What the run printed, in order, plus each command's exit code (plain output names only failures).
    assert [line for line in logs if line != "[exit 0]"] == printed
    assert logs.count("[exit 0]") == 1
    assert logs[logs.index("line 12") + 2 :][:1] == ["[exit 0]"]  # after its last line (and its stderr)

    data = rig(project, "logs", "build", "--json").json
    assert set(data) >= {"run_id", "node_path", "status", "lines", "metadata"}
    assert (data["node_path"], data["status"]) == ("build", "succeeded")
    assert data["metadata"] == {"version": "1.2", "token": "***"}
    assert {"stream": "stdout", "data": "token=***"} in data["lines"]
    assert {"stream": "stderr", "data": "warn"} in data["lines"]
    assert {"stream": "info", "data": "building"} in data["lines"]
    assert data["lines"][2]["stream"] == "command" and data["lines"][2]["data"].startswith("$ echo")

    state = project / ".rig" / "state.sqlite"
    stored = "".join(str(row[0]) for row in rows(state, "SELECT data FROM node_run_output"))
    assert "token=***" in stored and TOKEN not in stored


def test_runs_lists_each_apply_with_its_tasks_and_logs_picks_a_run_or_an_apply_by_short_id(project: Path) -> None:
    rig(project, "apply")
    rig(project, "cache", "invalidate", "check")
    rig(project, "apply", code=1, RIG_TEST_FAIL="1")

    history = rig(project, "runs", "--json").json["runs"]
    assert [item["status"] for item in history] == ["failed", "succeeded"]
    failed, first = history
    assert first["owner"] and "@" in first["owner"]
    assert (first["workflow"], first["command"], first["ran"], first["cached_node_count"]) == ("logs", "apply", 2, 0)
    assert first["duration_seconds"] > 0
    assert [(node["path"], node["status"], node["cached"]) for node in first["nodes"]] == [
        ("build", "succeeded", False),
        ("check", "succeeded", False),
    ]
    assert first["nodes"][0]["metadata"] == {"version": "1.2", "token": "***"}
    assert [(node["path"], node["status"]) for node in failed["nodes"]] == [("build", "cached"), ("check", "failed")]
    assert failed["nodes"][0]["run_id"] == first["nodes"][0]["run_id"]
    assert "check failed on purpose" in failed["error"]

    table = rig(project, "runs").stdout
    assert first["short_id"] in table and failed["short_id"] in table and "failed at check" in table
    detail = rig(project, "runs", failed["short_id"]).stdout
    assert "build" in detail and "cached" in detail and "check" in detail

    # No task: the last apply that ran something, every run of it under a header.
    whole = rig(project, "logs", code=0).stdout
    assert f"==> check (run {failed['nodes'][1]['run_id'][:8]}) <==" in whole and "checked" in whole
    by_run = rig(project, "logs", "--run", first["nodes"][0]["run_id"][:8]).stdout
    assert "line 12" in by_run and "==>" not in by_run
    by_apply = rig(project, "logs", "--run", first["short_id"], "--json").json
    assert (by_apply["apply_id"], by_apply["status"]) == (first["id"], "succeeded")
    assert [run["node_path"] for run in by_apply["runs"]] == ["build", "check"]
    assert {"stream": "stdout", "data": "checked"} in by_apply["runs"][1]["lines"]

    missing = run_rig("logs", "--run", "deadbeef", cwd=project, env=ENV, subprocess=True)
    assert missing.returncode == 1 and "No run or apply deadbeef" in missing.stderr, missing


def test_step_metadata_that_is_not_json_is_a_clear_error(tmp_path: Path) -> None:
    config = """
from rigcli import workflow

app = workflow("meta")


def task(step):
    step.metadata({"when": object()})


workflows = app.sequence("meta").task("task", task)
"""
    project = write_project(tmp_path / "meta", config)
    result = rig(project, "apply", code=1)
    assert "step.metadata value" in result.stderr and "JSON-serializable" in result.stderr


def test_cache_clear_removes_the_stored_output_and_the_history(project: Path) -> None:
    rig(project, "apply")
    state = project / ".rig" / "state.sqlite"
    assert rows(state, "SELECT count(*) FROM node_run_output")[0][0] > 0
    rig(project, "cache", "clear", "--yes")
    assert rows(state, "SELECT count(*) FROM node_run_output") == [(0,)]
    assert rows(state, "SELECT count(*) FROM apply_runs") == [(0,)]
    assert rig(project, "runs", "--json").json == {"runs": []}


def test_a_small_cap_keeps_the_head_and_the_tail_and_says_what_was_dropped(tmp_path: Path) -> None:
    config = """
from rigcli import define_provider, workflow

app = workflow("big", providers={"box": define_provider("local")})


def chatty(step, box):
    machine = box.create_machine()
    machine.exec("for i in $(seq 1 5000); do echo \\"line $i of the chatty task\\"; done")
    machine.delete()


workflows = app.sequence("big").task("chatty", chatty)
"""
    project = write_project(tmp_path / "big", config)
    rig(project, "apply", RIG_LOG_CAP="16k")
    logs = rig(project, "logs", "chatty").stdout
    assert len(logs) < 16 * 1024 + 200
    lines = logs.splitlines()
    assert "line 1 of the chatty task" in lines and "line 5000 of the chatty task" in lines
    [marker] = [line for line in lines if "dropped here" in line]
    assert "KiB of output dropped" in marker
    kept = [int(line.split()[1]) for line in lines if line.startswith("line ")]
    assert kept == sorted(kept) and len(kept) < 1000  # in order, the middle gone


def test_logs_of_megabytes_with_colour_and_accents_come_out_whole_and_without_colour_in_a_pipe(
    tmp_path: Path,
) -> None:
    """Read back as bytes in pieces of a few MiB: a line, a character or a colour sequence cut
    between two pieces still comes out whole, and a pipe gets the text without its colour."""
    config = r'''
from rigcli import define_provider, workflow

app = workflow("big", providers={"box": define_provider("local")})


def painted(step, box):
    machine = box.create_machine()
    machine.exec(r"""line=$(printf 'ünï \033[31mred\033[0m end'); yes "$line" | head -n 400000""")
    machine.delete()


workflows = app.sequence("big").task("painted", painted)
'''
    project = write_project(tmp_path / "big", config)
    rig(project, "apply", RIG_LOG_CAP="64m")
    logs = rig(project, "logs", "painted").stdout
    assert "\x1b" not in logs and "\ufffd" not in logs
    painted = [line for line in logs.splitlines() if "red" in line and not line.startswith("$ ")]  # not the command
    assert len(painted) == 400000 and set(painted) == {"ünï red end"}
    # Again, now copied straight from the state file without loading the config (the config remembered).
    assert rig(project, "logs", "painted").stdout == logs


class _Reader:
    """A stream's lines, read by a thread as they come."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def says(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def all(self) -> list[str]:
        self._thread.join(timeout=20)
        return list(self.lines)


def _start(project: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [RIG, *args],
        cwd=project,
        env=env_with_rig({**ENV, **env}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stored_lines(state: str | Path) -> list[str]:
    """The output lines stored so far (none while the state or its tables do not exist yet)."""
    try:
        found = rows(state, "SELECT data FROM node_run_output")
    except Exception:
        return []
    return [line for (data,) in found for line in str(data).splitlines()]


def _follow_while_it_runs(
    apply_in: Path,
    follow_in: Path,
    gate: Path,
    env: dict[str, str],
    state: str | Path,
    task: tuple[str, ...] = ("build",),
) -> list[str]:
    """Start an apply held at its gate, follow its build ``task`` (or with none, the whole apply) from
    ``follow_in``, release it: what the follower printed."""
    applying = _start(apply_in, "apply", RIG_TEST_GATE=str(gate), **env)
    try:
        wait_for(lambda: "waiting" in _stored_lines(state), "the apply to reach its gate", timeout=60, interval=0.2)
        following = _start(follow_in, "logs", "--follow", *task, **env)
        followed = _Reader(following.stdout)
        wait_for(lambda: followed.says("waiting"), "the follower to show the running task", timeout=30)
        assert following.poll() is None  # still following: the run is not over
        gate.touch()
        assert following.wait(timeout=60) == 0
        assert applying.wait(timeout=60) == 0
        assert following.stderr is not None and "Traceback" not in following.stderr.read()
        return followed.all()
    finally:
        gate.touch()
        for process in (applying,):
            if process.poll() is None:
                process.kill()


def test_logs_follow_from_another_process_ends_when_the_run_finishes(project: Path, tmp_path: Path) -> None:
    lines = _follow_while_it_runs(project, project, tmp_path / "gate", {}, project / ".rig" / "state.sqlite")
    assert lines[0] == "building"
    assert lines.index("waiting") < lines.index("released")
    assert lines[-2:] == ["[exit 0]", "machine.deleted machine=" + lines[-1].split("=", 1)[1]]


def test_logs_follow_of_the_whole_apply_ends_when_the_apply_ends(project: Path, tmp_path: Path) -> None:
    lines = _follow_while_it_runs(project, project, tmp_path / "gate", {}, project / ".rig" / "state.sqlite", ())
    headers = [line for line in lines if line.startswith("==> ")]
    assert [header.split()[1] for header in headers] == ["build", "check"]  # check started after the follower
    # Followed, an apply's lines say whose they are, as --progress plain does.
    assert lines.index("build | released") < lines.index(headers[1]) < lines.index("check | checked")


def test_logs_follow_on_team_state_from_another_clone(tmp_path: Path, postgres_server: Any) -> None:
    from tests.pg_server import unique_schema

    schema = unique_schema("logs")
    url = str(postgres_server.url(schema, fragments_schema=f"{schema}_fragments"))
    clones = [
        write_project(tmp_path / name, LOGS_CONFIG, **{".env": f"RIG_STATE_URL={url}\n"}) for name in ("alice", "bob")
    ]
    lines = _follow_while_it_runs(clones[0], clones[1], tmp_path / "gate", {"RIG_HOME": str(tmp_path / "home")}, url)
    assert "token=***" in lines and "released" in lines
    assert TOKEN not in "\n".join(lines)
    history = rig(clones[1], "runs", "--json").json["runs"]
    assert [item["status"] for item in history] == ["succeeded"]


def test_ctrl_c_ends_a_follow_with_130_and_no_error(project: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    applying = _start(project, "apply", RIG_TEST_GATE=str(gate))
    try:
        state = project / ".rig" / "state.sqlite"
        wait_for(lambda: "waiting" in _stored_lines(state), "the apply to reach its gate", timeout=60, interval=0.2)
        following = _start(project, "logs", "-f", "build")
        followed = _Reader(following.stdout)
        wait_for(lambda: followed.says("waiting"), "the follower to show the running task", timeout=30)
        following.send_signal(signal.SIGINT)
        assert following.wait(timeout=20) == 130
        assert following.stderr is not None
        stderr = following.stderr.read()
        assert "Traceback" not in stderr and "error:" not in stderr, stderr
    finally:
        gate.touch()
        assert applying.wait(timeout=60) == 0


PARALLEL_CONFIG = """
import os
import time

from rigcli import sequence


def branch(name):
    def work(step):
        print(f"{name} waiting", flush=True)
        while not os.path.exists(os.environ["RIG_TEST_GATE"]):
            time.sleep(0.05)
        print(f"{name} released", flush=True)
        return {"ctx": {}}

    return sequence(name).task("work", work)


workflows = sequence("par").parallel(left=branch("left"), right=branch("right"))
"""


def test_logs_follow_of_parallel_branches_prefixes_each_line_with_its_task(tmp_path: Path) -> None:
    project = write_project(tmp_path / "par", PARALLEL_CONFIG)
    gate = tmp_path / "gate"
    applying = _start(project, "apply", RIG_TEST_GATE=str(gate))
    try:
        state = project / ".rig" / "state.sqlite"
        wait_for(
            lambda: {"left waiting", "right waiting"} <= set(_stored_lines(state)),
            "both branches to reach the gate",
            timeout=60,
            interval=0.2,
        )
        following = _start(project, "logs", "--follow")
        followed = _Reader(following.stdout)
        wait_for(lambda: followed.says("right waiting") and followed.says("left waiting"), "the follower", timeout=30)
        gate.touch()
        assert following.wait(timeout=60) == 0
        assert applying.wait(timeout=60) == 0
        lines = followed.all()
    finally:
        gate.touch()
        if applying.poll() is None:
            applying.kill()
    printed = [line for line in lines if not line.startswith("==> ")]
    for path in ("left.work", "right.work"):
        name = path.split(".")[0]
        assert f"{path} | {name} waiting" in printed and f"{path} | {name} released" in printed, lines
    assert all(line.startswith(("left.work | ", "right.work | ")) for line in printed), lines
