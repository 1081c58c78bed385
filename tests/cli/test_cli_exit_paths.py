"""Every way a command ends finishes the runs it started: none is left ``running`` by a live rig."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project
from tests.helpers import runs

SYS_EXIT = """
import sys

from rigcli import workflow


def leave(step):
    sys.exit(3)


async def leave_async(step):
    sys.exit(0)


workflows = workflow("bye").sequence("bye").task("{name}", {handler})
"""

CHATTY = """
import time

from rigcli import workflow


def talk(step):
    for i in range(200):
        print(f"line {i}", flush=True)
        time.sleep(0.05)


workflows = workflow("chatty").sequence("chatty").task("talk", talk).task("after", lambda step: None)
"""

QUIET = """
import time

from rigcli import workflow


def first(step):
    time.sleep(1)  # the reader goes away meanwhile


workflows = workflow("quiet").sequence("quiet").task("first", first).task("second", lambda step: print("second ran"))
"""

FILL = """
from rigcli import workflow


def fill(step):
    with open("filler", "wb") as handle:
        while True:
            handle.write(b"x" * 65536)


workflows = workflow("full").sequence("full").task("small", lambda step: {"ctx": {"n": 1}}).task("fill", fill)
"""


def _agree_nothing_runs(project: Path) -> None:
    """plan, explain and cache ls see no run as running (nor in doubt: its process is this one, gone)."""
    entries = run_rig("--json", "cache", "ls", cwd=project).json["entries"]
    assert not [entry for entry in entries if entry["status"] in ("running", "in-doubt")], entries
    for args in (["plan"], ["cache", "explain"]):
        document = run_rig("--json", *args, cwd=project).json
        nodes = document.get("nodes") or document.get("explanations")
        assert not [node for node in nodes if node["reason"]["code"] == "in-doubt"], nodes


@pytest.mark.parametrize(("handler", "code"), [("leave", 3), ("leave_async", 0)])
def test_a_handler_calling_sys_exit_fails_its_run(tmp_path: Path, handler: str, code: int) -> None:
    project = write_project(tmp_path / "project", SYS_EXIT.format(name="bye", handler=handler))
    result = run_rig("apply", cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)
    assert result.returncode == 1, result
    assert result.error_lines == [f"error: Task bye called sys.exit({code})"], result
    assert runs(project / ".rig" / "state.sqlite", "node_path", "status", "error") == [
        ("bye", "failed", f"Task bye called sys.exit({code})")
    ]
    _agree_nothing_runs(project)


def _head(project: Path, lines: int) -> list[bytes]:
    """`rig apply 2>&1 | head -N`: read N lines, close the pipe, and wait for rig to end (exit 1)."""
    process = subprocess.Popen(
        [RIG, "apply"],
        cwd=project,
        env=env_with_rig({"RIG_RENDER": "0"}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert process.stdout is not None
        seen = [process.stdout.readline() for _ in range(lines)]
        process.stdout.close()
        assert process.wait(timeout=10) == 1
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return seen


def test_a_closed_output_pipe_interrupts_the_task_that_writes(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", CHATTY)
    assert _head(project, 3)[-1].strip() == b"talk | line 0"
    assert runs(project / ".rig" / "state.sqlite", "node_path", "status", "error") == [
        ("talk", "interrupted", "interrupted")
    ]
    _agree_nothing_runs(project)


def test_a_closed_output_pipe_between_tasks_starts_nothing_new(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", QUIET)
    assert _head(project, 2)[-1].strip() == "● first".encode()  # closed while first runs
    assert [
        (path, status) for path, status, _ in runs(project / ".rig" / "state.sqlite", "node_path", "status", "error")
    ] == [("first", "succeeded")]
    _agree_nothing_runs(project)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (root only): a disk that really fills up."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        for _ in range(50):  # a process that still has a file open there makes umount busy for a moment
            if subprocess.run(["umount", str(mount)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)


def test_a_full_disk_fails_the_run_instead_of_leaving_it_running(tiny_disk: Path) -> None:
    project = write_project(tiny_disk / "project", FILL)
    result = run_rig("apply", cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)
    assert result.returncode == 1, result
    [line] = result.error_lines
    assert "No space left on device" in line, result
    recorded = runs(project / ".rig" / "state.sqlite", "node_path", "status", "error")
    assert [(path, status) for path, status, _ in recorded] == [("fill", "failed"), ("small", "succeeded")], recorded
    again = run_rig("apply", cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)  # the disk is still full
    assert again.returncode == 1, again
    assert len(again.error_lines) == 1 and "Traceback" not in again.stderr, again
    assert runs(project / ".rig" / "state.sqlite", "node_path", "status", "error") == recorded
    (project / "filler").unlink()
    _agree_nothing_runs(project)
