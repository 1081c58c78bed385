"""What a task writes to fd 1 and 2 itself passes rig's masker: in order, byte for byte, and never holding rig up."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project

RELAY_CONFIG = r"""
import os, subprocess

from rigcli import sequence


def raw(step):
    os.write(2, b"raw line from the task\n")


def binary(step):
    os.write(1, bytes(range(256)) + b"\n")


def hostile(step):
    os.write(2, b"raw \x1b]0;pwned\x07\x1b[2Jwrite\n")
    subprocess.run(["printf", "child \\033]0;pwned\\007\\033[2Jprintf\\n"], check=True)


def escapee(step):
    # A process that leaves rig's environment and session keeps fd 1 and 2 open after rig is done.
    command = "echo $$ > escapee.pid; exec sleep 30"
    subprocess.Popen(["env", "-i", "setsid", "sh", "-c", command], start_new_session=True)
    print("left a process behind")


workflows = [
    sequence("raw").task("raw", raw, cache_ttl=0),
    sequence("binary").task("binary", binary, cache_ttl=0),
    sequence("escapee").task("escapee", escapee, cache_ttl=0),
    sequence("hostile").task("hostile", hostile, cache_ttl=0),
]
"""


def _project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "relay", RELAY_CONFIG)


def test_raw_output_comes_before_the_lines_rig_prints_after_it(tmp_path: Path) -> None:
    result = run_rig("--workflow", "raw", "apply", cwd=_project(tmp_path), env={"RIG_RENDER": "0"}, subprocess=True)
    assert result.returncode == 0, result
    lines = result.stderr.splitlines()
    raw = lines.index("raw line from the task")
    done = next(index for index, line in enumerate(lines) if line.strip().startswith("✓ raw"))
    assert raw < done, result


def test_raw_output_reaches_a_terminal_without_control_sequences(tmp_path: Path) -> None:
    import pexpect

    env = env_with_rig({"TERM": "xterm-256color"})
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(
        RIG, ["--workflow", "hostile", "apply"], cwd=str(_project(tmp_path)), env=env, encoding="utf-8", timeout=60
    )
    child.expect(pexpect.EOF)
    child.close()
    output = child.before or ""
    assert child.exitstatus == 0, output
    assert "raw write" in output and "child printf" in output, repr(output)
    assert "\x1b]0;" not in output and "pwned" not in output and "\x1b[2J" not in output, repr(output)


def test_off_a_terminal_raw_output_is_left_as_written(tmp_path: Path) -> None:
    result = run_rig("--workflow", "hostile", "apply", cwd=_project(tmp_path), env={"RIG_RENDER": "0"}, subprocess=True)
    assert result.returncode == 0, result
    assert "raw \x1b]0;pwned\x07\x1b[2Jwrite" in result.stderr  # a pipe or a file gets what the task wrote
    assert "child \x1b]0;pwned\x07\x1b[2Jprintf" in result.stdout


def test_bytes_that_are_not_text_pass_unchanged(tmp_path: Path) -> None:
    completed = subprocess.run(
        [RIG, "--workflow", "binary", "apply"],
        cwd=_project(tmp_path),
        env=env_with_rig({"RIG_RENDER": "0"}),
        capture_output=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed
    assert completed.stdout == bytes(range(256)) + b"\n"


def test_a_process_that_escaped_with_the_output_open_does_not_hold_rig_or_its_reader_up(tmp_path: Path) -> None:
    # The escaped process holds the relay's pipe, not the reader's: the reader sees the end of
    # rig's output when rig exits, not when that process does (30 s later).
    project = _project(tmp_path)
    started = time.monotonic()
    try:
        completed = subprocess.run(
            [RIG, "--workflow", "escapee", "apply"],
            cwd=project,
            env=env_with_rig({"RIG_RENDER": "0"}),
            capture_output=True,
            text=True,
            timeout=25,
        )
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int((project / "escapee.pid").read_text()), signal.SIGKILL)
    assert completed.returncode == 0, completed
    assert "left a process behind" in completed.stderr
    assert time.monotonic() - started < 15
