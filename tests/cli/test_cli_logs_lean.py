"""rig logs TASK without loading the config: only while the config that named the task is unchanged,
only for a run that succeeded, and with the same bytes the full way prints."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rigcli
from tests.cli.cli_support import RIG, Result, env_with_rig, run_rig_masked, write_project

TOKEN = "tok-lean-5c1e9a7d"
# Each import of the config appends a line to loads.txt: how a test sees whether rig loaded it.
CONFIG = """
import os
from pathlib import Path

from rigcli import define_provider, secret, workflow
from helpers import NAME

with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")

app = workflow("lean", providers={"box": define_provider("local", env={"TOKEN": secret("RIG_TEST_TOKEN")})})


def build(step, box):
    print("building")
    machine = box.create_machine()
    machine.exec('echo "token=$TOKEN"; printf "\\\\033[31mred\\\\033[0m\\\\n"; echo done')
    machine.delete()
    if os.environ.get("RIG_TEST_FAIL"):
        raise RuntimeError("build failed on purpose")


workflows = app.sequence("lean").task(NAME, build)
"""
OTHER_WORKFLOW = """

def noop(step):
    return None


workflows = [workflows, workflow("other").sequence("other").task("build", noop)]
"""
ENV = {"RIG_TEST_TOKEN": TOKEN, "RIG_RENDER": "0"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "lean", CONFIG, **{"helpers.py": 'NAME = "build"\n'})


def rig(project: Path, *args: str, code: int = 0, **env: str) -> Result:
    return run_rig_masked(project, args, env={**ENV, **env}, secret=TOKEN, code=code)


def loads(project: Path) -> int:
    return (project / "loads.txt").read_text().count("loaded")


def test_a_second_rig_logs_prints_the_same_masked_bytes_without_loading_the_config(project: Path) -> None:
    rig(project, "apply")
    before = loads(project)
    full = rig(project, "logs", "build")
    assert loads(project) == before + 1  # the first one loads it, and remembers what it names
    assert "token=***" in full.stdout and "red" in full.stdout and "\x1b" not in full.stdout

    lean = rig(project, "logs", "build")
    assert loads(project) == before + 1  # not loaded again
    assert (lean.stdout, lean.stderr) == (full.stdout, full.stderr)
    assert rig(project, "--workflow", "lean", "logs", "build").stdout == full.stdout
    assert loads(project) == before + 1


def test_a_changed_config_or_helper_is_loaded_again_and_answers_for_itself(project: Path) -> None:
    rig(project, "apply")
    rig(project, "logs", "build")
    seen = loads(project)

    (project / "helpers.py").write_text('NAME = "compile"\n')  # the task is renamed in a helper module
    renamed = rig(project, "logs", "build", code=1)
    assert loads(project) == seen + 1
    assert "has no task build" in renamed.stderr, renamed

    config = project / "rig_config.py"
    config.write_text(config.read_text() + OTHER_WORKFLOW)
    (project / "helpers.py").write_text('NAME = "build"\n')
    rig(project, "logs", "build", code=2)  # two workflows now: which one is for the user to say
    assert rig(project, "--workflow", "lean", "logs", "build").stdout.count("token=***") == 1


def test_a_run_that_did_not_succeed_is_shown_the_full_way_with_how_it_ended(project: Path) -> None:
    rig(project, "apply")
    rig(project, "logs", "build")
    rig(project, "cache", "invalidate", "build")
    rig(project, "apply", code=1, RIG_TEST_FAIL="1")
    seen = loads(project)
    failed = rig(project, "logs", "build")
    assert loads(project) > seen
    assert "token=***" in failed.stdout
    assert "build failed: " in failed.stderr and "build failed on purpose" in failed.stderr, failed


def test_the_lean_way_imports_nothing_that_copying_the_bytes_does_not_need(project: Path) -> None:
    rig(project, "apply")
    full = rig(project, "logs", "build")  # remembers what the config names
    # -S: no site, so no editable install's import hook (it imports pathlib); rig's own directory
    # on PYTHONPATH stands in for it. The project has no .env, so python-dotenv is not needed.
    completed = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", RIG, "logs", "build"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env_with_rig({**ENV, "PYTHONPATH": str(Path(rigcli.__file__).resolve().parents[1])}),
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == full.stdout
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines()}
    assert "rigcli.state.output_file" in imported  # the lean way answered
    # Each of these cost more than finding the project (pathlib: urllib.parse with it; the sqlite3
    # package: datetime with it, where _sqlite3 reads the same); the full way and an error still
    # import them where they are used.
    costly = ["pathlib", "urllib.parse", "contextlib", "importlib", "json", "sqlite3", "datetime", "typing"]
    assert "_sqlite3" in imported
    assert [name for name in costly if name in imported] == []
    for full_way in ("rigcli.masking", "rigcli.config_loader", "rigcli.engine", "rigcli.state.store"):
        assert full_way not in imported, full_way


def test_stored_output_goes_into_a_pipe_widened_to_a_mebibyte_both_ways(project: Path) -> None:
    # A 64 KiB pipe wakes its reader ~760 times for 50 MB; 1 MiB is the unprivileged maximum.
    rig(project, "apply")
    for way in ("full", "lean"):
        before = loads(project)
        read_end, write_end = os.pipe()
        try:
            assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == 64 * 1024
            subprocess.run([RIG, "logs", "build"], cwd=project, stdout=write_end, env=env_with_rig(ENV), check=True)
            os.close(write_end)
            write_end = -1
            assert b"token=***" in os.read(read_end, 1 << 20)
            assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == 1 << 20, way
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
        assert loads(project) == before + (1 if way == "full" else 0)  # each way was the one named


def test_a_helper_rewritten_to_the_same_size_and_mtime_is_loaded_again(project: Path) -> None:
    # rsync -t, tar or `touch -r` can put an old mtime back on new bytes; the change time moves.
    rig(project, "apply")
    rig(project, "logs", "build")
    seen = loads(project)
    helper = project / "helpers.py"
    stat = helper.stat()
    time.sleep(0.02)  # past a coarse file clock's tick
    helper.write_text('NAME = "built"\n')
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (helper.stat().st_size, helper.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    renamed = rig(project, "logs", "build", code=1)
    assert loads(project) == seen + 1
    assert "has no task build" in renamed.stderr, renamed
