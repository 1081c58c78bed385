"""The in-process runner: it captures what a real process would show, and leaves nothing behind."""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
from pathlib import Path

import pytest

import rigcli.cli.commands.project as project_commands
from tests.cli.cli_support import DEV_CONFIG, Result, run_rig, write_project
from tests.cli.inprocess import InProcessExit

RUNNER_CONFIG = """
import os
import subprocess
import sys

from rigcli import sequence


def child_output(workflow):
    subprocess.run(["sh", "-c", "echo child-out; echo child-err >&2"], check=True)


def fd_output(workflow):
    os.write(1, b"fd-out\\n")
    os.write(2, b"fd-err\\n")


def python_stdin(workflow):
    return sys.stdin.read()


def child_stdin(workflow):
    return subprocess.run(["cat"], capture_output=True, text=True).stdout


def prepare(step):
    if os.environ.get("RUNNER_FAIL") == "1":
        raise RuntimeError("the disk is full")
    return {"ctx": {"ready": True}}


def environment(workflow):
    return {"from_dotenv": os.environ.get("RUNNER_DOTENV"), "helper": helper.VALUE}


import helper

workflows = (
    sequence("runner")
    .task("prepare", prepare)
    .operation("child-output", run=child_output)
    .operation("fd-output", run=fd_output)
    .operation("python-stdin", run=python_stdin)
    .operation("child-stdin", run=child_stdin)
    .operation("environment", run=environment)
)
"""


def runner_project(directory: Path, helper_value: str = "first") -> Path:
    return write_project(
        directory, RUNNER_CONFIG, **{"helper.py": f"VALUE = {helper_value!r}\n", ".env": "RUNNER_DOTENV=loaded\n"}
    )


def test_output_of_a_child_process_is_captured_at_the_file_descriptor(tmp_path: Path) -> None:
    result = run_rig("op", "child-output", cwd=runner_project(tmp_path / "p"))
    assert result.returncode == 0, result
    assert result.stdout == "child-out\n"
    assert "child-err" in result.stderr.splitlines()


def test_writes_to_the_file_descriptors_themselves_are_captured(tmp_path: Path) -> None:
    result = run_rig("op", "fd-output", cwd=runner_project(tmp_path / "p"))
    assert result.returncode == 0, result
    assert result.stdout == "fd-out\n"
    assert "fd-err" in result.stderr.splitlines()


@pytest.mark.parametrize("operation", ["python-stdin", "child-stdin"])
def test_input_reaches_sys_stdin_and_file_descriptor_0(tmp_path: Path, operation: str) -> None:
    result = run_rig("op", operation, "--json", cwd=runner_project(tmp_path / "p"), input="first\nsecond\n")
    assert result.returncode == 0, result
    assert result.json == "first\nsecond\n"


def test_a_failing_command_keeps_its_exit_code_and_error_line(tmp_path: Path) -> None:
    failed = run_rig("apply", cwd=runner_project(tmp_path / "p"), env={"RUNNER_FAIL": "1"})
    assert failed.returncode == 1
    assert failed.stdout == ""
    line = "error: Task prepare failed: RuntimeError: the disk is full at rig_config.py:27 in prepare"
    assert failed.stderr.splitlines()[-1] == f"{line} (the rest: rig logs prepare)"
    assert failed.error_lines == [f"{line} (the rest: rig logs prepare)"]
    usage = run_rig("frobnicate", cwd=tmp_path)
    assert (usage.returncode, usage.stdout, usage.stderr) == (2, "", "error: No such command 'frobnicate'.\n")


def _seen(result: Result, directory: Path) -> tuple[int, list[str], list[str]]:
    """Exit code and lines, without what differs between any two runs: location, durations, run ids."""

    def lines(text: str) -> list[str]:
        text = text.replace(str(directory.resolve()), "<dir>").replace(str(directory), "<dir>")
        text = re.sub(r"\brun [0-9a-f]{8}\b", "run <id>", text)
        return [re.sub(r"\b\d+\.\d+s\b", "<t>", line) for line in text.splitlines(keepends=True)]

    return result.returncode, lines(result.stdout), lines(result.stderr)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        # Click's help, sized to the terminal it finds (none)
        pytest.param(["--help"], {}, id="help"),
        # one JSON document on stdout
        pytest.param(["--json", "plan"], {}, id="json"),
        # plain progress lines on stderr, then a failure's exit code and error line
        pytest.param(["apply"], {"RUNNER_FAIL": "1"}, id="failed-apply"),
        # a child process writing to file descriptors 1 and 2
        pytest.param(["op", "child-output"], {}, id="child-process"),
        pytest.param(["frobnicate"], {}, id="usage-error"),
    ],
)
def test_in_process_and_subprocess_agree(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    """Guards the runner against drift: the same command line gives the same exit code and output either way."""
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    in_process = run_rig(*args, cwd=runner_project(inside), env=env)
    as_process = run_rig(*args, cwd=runner_project(outside), env=env, subprocess=True)
    assert _seen(in_process, inside) == _seen(as_process, outside)


def test_the_process_is_left_as_it_was(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    project = runner_project(tmp_path / "p")

    def state() -> tuple[object, ...]:
        streams = (sys.stdin, sys.stdout, sys.stderr, os.fstat(0).st_ino, os.fstat(1).st_ino, os.fstat(2).st_ino)
        signals = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
        imports = (sys.path[:], sys.meta_path[:], sys.argv[:])
        return os.getcwd(), dict(os.environ), streams, signals, imports, logging.getLogger().handlers[:], os._exit

    before = state()
    modules_before = {name: sys.modules.get(name) for name in ("rig_config", "helper")}  # another test's, or none
    print("the test's own output")
    result = run_rig("op", "environment", "--json", cwd=project, env={"RUNNER_EXTRA": "1"})
    assert result.json == {"from_dotenv": "loaded", "helper": "first"}
    assert state() == before
    assert {name: sys.modules.get(name) for name in modules_before} == modules_before
    assert not [name for name, module in sys.modules.items() if str(project) in str(getattr(module, "__file__", ""))]
    assert capfd.readouterr().out == "the test's own output\n"  # neither lost nor captured by rig


def test_two_projects_never_see_each_others_modules(tmp_path: Path) -> None:
    first = run_rig("op", "environment", "--json", cwd=runner_project(tmp_path / "a", "first"))
    second = run_rig("op", "environment", "--json", cwd=runner_project(tmp_path / "b", "second"))
    assert (first.json["helper"], second.json["helper"]) == ("first", "second")


def test_os_exit_is_refused_rather_than_ending_the_test_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(opts: object) -> int:
        raise KeyboardInterrupt  # the error handler maps it to 130, and rig leaves with os._exit(130)

    monkeypatch.setattr(project_commands, "version", interrupted)
    real_exit = os._exit
    with pytest.raises(InProcessExit) as caught:
        run_rig("version", "--json", cwd=tmp_path)
    assert caught.value.code == 130
    assert os._exit is real_exit


def test_the_dev_project_runs_the_same_either_way(tmp_path: Path) -> None:
    """The project most CLI tests use: a fork (the apply's progress, then the name) and the plan table after it."""
    seen = []
    for where, subprocess in ((tmp_path / "inside", False), (tmp_path / "outside", True)):
        project = write_project(where, DEV_CONFIG)
        seen.append(
            [_seen(run_rig(*args, cwd=project, subprocess=subprocess), where) for args in (["fork", "dev"], ["plan"])]
        )
    assert seen[0] == seen[1]
