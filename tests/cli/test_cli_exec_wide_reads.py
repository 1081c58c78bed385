"""A command's output read and written a MiB at a time: secrets across reads masked, controls stripped."""

from __future__ import annotations

import fcntl
import os
import subprocess
import uuid
from pathlib import Path

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project

# The secret is cut just inside the first 1 MiB read (the widened pipe's size), and the rest of the
# output is over a MiB of clean ASCII lines with a window title and a bell in the middle of it.
CONFIG = r"""
from rigcli import define_provider, secret, workflow

app = workflow("wide", providers={"box": define_provider("local", env={"TOKEN": secret("RIG_TEST_TOKEN")})})
PRINT = (
    "python3 -c \"import os, sys, time; t = os.environ['TOKEN']; "
    "sys.stdout.write('x' * (1024 * 1024 - 10) + t[:10]); sys.stdout.flush(); time.sleep(0.3); "
    "sys.stdout.write(t[10:] + '\\n'); "
    "sys.stdout.write(('a' * 99 + '\\n') * 6000 + 'title\\x1b]0;pwned\\x07 bell\\x07 done\\n'); "
    "sys.stdout.write(('b' * 99 + '\\n') * 6000)\""
)


def emit(step, box):
    machine = box.create_machine()
    machine.exec(PRINT, name="print")
    machine.delete()


workflows = app.sequence("root").task("emit", emit, cache_ttl=0)
"""


def test_a_secret_across_two_mib_reads_is_masked_and_controls_are_stripped(tmp_path: Path) -> None:
    token = f"tok-{uuid.uuid4().hex}"
    project = write_project(tmp_path / "project", CONFIG)
    env = {"RIG_TEST_TOKEN": token, "RIG_HOME": str(tmp_path / "home")}

    applied = run_rig("--json", "apply", cwd=project, env=env, subprocess=True)
    logs = run_rig("logs", "emit", cwd=project, env=env, subprocess=True)

    assert applied.returncode == 0, applied
    lines = applied.stderr.splitlines()
    # A line that long is shown in pieces; together they are the line, its secret masked.
    pieces = lines[: lines.index(f"emit | {'a' * 99}")]
    long_line = "".join(line.removeprefix("emit | ") for line in pieces)
    assert long_line == "x" * (1024 * 1024 - 10) + "***"
    assert "emit | title bell done" in lines
    assert lines.count(f"emit | {'a' * 99}") == 6000 and lines.count(f"emit | {'b' * 99}") == 6000
    assert logs.returncode == 0, logs
    for text in (applied.stderr, applied.stdout, logs.stdout):
        assert token not in text and token[:10] not in text
        assert "\x1b" not in text and "\x07" not in text
    assert "pwned" not in applied.stderr  # (the logs show the command, whose text has it)
    assert "title bell done" in logs.stdout


ECHO_CONFIG = """
import os

from rigcli import define_provider, workflow

app = workflow("wide", providers={"box": define_provider("local")})


def emit(step, box):
    machine = box.create_machine()
    machine.exec(os.environ.get("RIG_TEST_COMMAND", "true"), name="print")
    machine.delete()


workflows = app.sequence("root").task("emit", emit, cache_ttl=0)
"""


def test_a_commands_output_goes_into_a_stderr_pipe_widened_to_a_mebibyte(tmp_path: Path) -> None:
    # A MiB of output is then written in one go, not 64 KiB at a time, each waiting for the reader.
    project = write_project(tmp_path / "project", ECHO_CONFIG)
    for command, size in (("true", 64 * 1024), ("echo printed", 1 << 20)):
        env = env_with_rig({"RIG_HOME": str(tmp_path / "home"), "RIG_TEST_COMMAND": command})
        read_end, write_end = os.pipe()
        try:
            assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == 64 * 1024
            subprocess.run(
                [RIG, "--json", "apply"], cwd=project, stdout=subprocess.DEVNULL, stderr=write_end, env=env, check=True
            )
            os.close(write_end)
            write_end = -1
            shown = os.read(read_end, 1 << 20)
            assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == size, command  # as it was, with nothing printed
            assert shown == (b"emit | printed\n" if command.startswith("echo") else b"")
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)


# Pages written a quarter of a millisecond apart (so reads gather several), then a page ending in the
# start of the secret, a pause longer than a gathering wait, and the rest of it.
GATHERED_CONFIG = r"""
from rigcli import define_provider, secret, workflow

app = workflow("gathered", providers={"box": define_provider("local", env={"TOKEN": secret("RIG_TEST_TOKEN")})})
PRINT = (
    "python3 -c \"import os, time; t = os.environ['TOKEN'].encode()\n"
    "for _ in range(40):\n"
    "    os.write(1, (b'a' * 99 + b'\\n') * 40 + b'a' * 95 + b'\\n'); time.sleep(0.00025)\n"
    "os.write(1, b'x' * 4086 + t[:10]); time.sleep(0.2); os.write(1, t[10:] + b' bell\\x07 done\\n')\""
)


def emit(step, box):
    machine = box.create_machine()
    machine.exec(PRINT, name="print")
    machine.delete()


workflows = app.sequence("root").task("emit", emit, cache_ttl=0)
"""


def test_a_secret_across_two_gathered_reads_is_masked(tmp_path: Path) -> None:
    token = f"tok-{uuid.uuid4().hex}"
    project = write_project(tmp_path / "project", GATHERED_CONFIG)
    env = {"RIG_TEST_TOKEN": token, "RIG_HOME": str(tmp_path / "home")}

    applied = run_rig("--json", "apply", cwd=project, env=env, subprocess=True)
    logs = run_rig("logs", "emit", cwd=project, env=env, subprocess=True)

    assert applied.returncode == 0, applied
    lines = applied.stderr.splitlines()
    assert lines.count(f"emit | {'a' * 99}") == 40 * 40 and lines.count(f"emit | {'a' * 95}") == 40
    assert f"emit | {'x' * 4086}*** bell done" in lines
    assert logs.returncode == 0, logs
    assert f"{'x' * 4086}*** bell done" in logs.stdout
    for text in (applied.stderr, applied.stdout, logs.stdout):
        assert token not in text and token[:10] not in text and token[10:] not in text
        assert "\x07" not in text
